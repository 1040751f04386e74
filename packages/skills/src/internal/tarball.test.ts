import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { isSkillsError } from '../errors.js';
import { readTarball } from './tarball.js';

/** The refusal `readTarball` answers (fails the test when it answers files). */
async function refusal(bytes: Buffer, budget: number): Promise<{ code: string; message: string }> {
  const error = await readTarball(bytes, budget).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isSkillsError(error)) throw new Error(`expected a SkillsError, got ${String(error)}`);
  return error;
}

describe('readTarball on compression bombs', () => {
  it('stops a 3 MB archive that inflates to 3 GB at the budget, before its end', async () => {
    // One gzip member holds 16 MiB of zeros in about 16 KB; 200 of them, concatenated, are a
    // valid multi-member gzip of 3.2 GiB. A broken member closes it: inflating everything
    // would end in that member's error, not in the budget's.
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 });
    const broken = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
    const bomb = Buffer.concat([...Array.from({ length: 200 }, () => member), broken]);
    expect(bomb.length).toBeLessThan(4 * 1024 * 1024);
    const memoryBefore = process.memoryUsage().arrayBuffers;
    const error = await refusal(bomb, 2 * 1024 * 1024);
    expect(error.code).toBe('INVALID_ARCHIVE');
    expect(error.message).toBe('The archive unpacks to more than 2097152 bytes');
    // The inflated bytes are counted and dropped, never gathered.
    expect(process.memoryUsage().arrayBuffers - memoryBefore).toBeLessThan(64 * 1024 * 1024);
  }, 10_000);

  it('refuses an archive gzipped twice: the tar parser would inflate the inner layer itself', async () => {
    const inner = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    const error = await refusal(gzipSync(inner), 1024 * 1024);
    expect(error).toMatchObject({ code: 'INVALID_ARCHIVE', message: 'The archive is compressed twice' });
  });

  it('refuses a plain tar over the budget without parsing it', async () => {
    const error = await refusal(Buffer.alloc(2048), 1024);
    expect(error).toMatchObject({
      code: 'INVALID_ARCHIVE',
      message: 'The archive unpacks to more than 1024 bytes',
    });
  });
});
