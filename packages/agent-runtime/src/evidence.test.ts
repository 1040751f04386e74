import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_INDEX_DIR, sessionIndexFileName } from '@agentd/evidence';
import { describe, expect, it } from 'vitest';
import { startRuntime } from '../test/helpers.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

describe('createAgentRuntime', () => {
  it('rolls the session index by the evidenceRotation it is given', async () => {
    const t = await startRuntime({ evidenceRotation: { maxSizeBytes: 700, maxFiles: 2 }, now: () => T0 });
    try {
      for (let turn = 0; turn < 6; turn++)
        await t.runtime.runTurn({ message: `turn ${turn}`, sessionKey: 'a:web:u' });
      await t.runtime.close();
      const day = sessionIndexFileName(T0);
      const files = readdirSync(join(t.dir, SESSION_INDEX_DIR)).sort();
      // One index line is a few hundred bytes: six turns roll the day file, and only two parts stay.
      expect(files).toEqual([day, `${day}.1`, `${day}.2`]);
    } finally {
      await t.close();
    }
  });

  it('rolls by a rotation applied while running (applyConfig evidenceRotation)', async () => {
    const t = await startRuntime({ now: () => T0 });
    try {
      await t.runtime.runTurn({ message: 'turn 0', sessionKey: 'a:web:u' });
      expect(() => t.runtime.applyConfig({ evidenceRotation: { maxFiles: -1 } })).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS' }),
      );
      t.runtime.applyConfig({ evidenceRotation: { maxSizeBytes: 700, maxFiles: 2 } });
      for (let turn = 1; turn < 7; turn++)
        await t.runtime.runTurn({ message: `turn ${turn}`, sessionKey: 'a:web:u' });
      await t.runtime.close();
      const day = sessionIndexFileName(T0);
      expect(readdirSync(join(t.dir, SESSION_INDEX_DIR)).sort()).toEqual([day, `${day}.1`, `${day}.2`]);
    } finally {
      await t.close();
    }
  });
});
