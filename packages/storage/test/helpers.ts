import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rejectionOf } from '@agentd/test-support';
import { StorageError } from '../src/index.js';

/** A fresh temporary directory and a function that removes it. */
export function makeTempDir(prefix = 'agentd-storage-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Awaits a call that must reject with a {@link StorageError} and returns that error. */
export function errorOf(promise: Promise<unknown>): Promise<StorageError> {
  return rejectionOf(promise, StorageError);
}
