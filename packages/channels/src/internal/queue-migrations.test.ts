import { readShippedMigrations } from '@agentd/storage/testing';
import { expect, it } from 'vitest';
import { channelsMigrations } from './queue-store.js';

// Databases record a migration's version and name, never its SQL: what shipped stays as it was.
it('keeps the libsql migrations that shipped byte for byte', () => {
  const shipped = readShippedMigrations(new URL('./migrations.shipped.json', import.meta.url));
  expect(channelsMigrations.slice(0, shipped.length)).toEqual(shipped);
});
