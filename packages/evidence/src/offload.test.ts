import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { offloadFileName, offloadSessionDir, writeOffload } from './offload.js';
import { trajectoryFileName } from './records.js';
import { tempDirEachTest } from './testing.js';

const temp = tempDirEachTest('evidence-offload-', { beforeEach, afterEach });

describe('offloadSessionDir', () => {
  it('is the stem of the session trajectory file', () => {
    expect(`${offloadSessionDir('a:b/c:..')}.jsonl`).toBe(trajectoryFileName('a:b/c:..'));
  });
});

describe('offloadFileName', () => {
  it('keeps ids out of the name, so no id can steer the path', () => {
    const name = offloadFileName({ ts: 5, seq: 2, traceId: '../../etc', toolCallId: 'a/b\\c d' });
    expect(name).toMatch(/^2-[0-9a-f]{16}\.json$/);
    // Same ids, same time: still a name of its own.
    expect(offloadFileName({ ts: 5, seq: 2, traceId: '../../etc', toolCallId: 'a/b\\c d' })).not.toBe(name);
  });
});

describe('writeOffload', () => {
  it('writes each call to its own file, even with the same ids and time', async () => {
    const input = {
      dataDir: temp.path,
      sessionKey: 's',
      traceId: 'tr',
      toolCallId: 'c',
      seq: 1,
      ts: 1,
      text: '"one"',
    };
    const first = await writeOffload(input);
    expect(first).toMatchObject({ resolved: true, bytes: 5 });
    const second = await writeOffload({ ...input, text: '"two"' });
    expect(second).toMatchObject({ resolved: true, bytes: 5 });
    expect(second.diskPathRel).not.toBe(first.diskPathRel);
    expect(readFileSync(join(temp.path, first.diskPathRel), 'utf8')).toBe('"one"');
    expect(readFileSync(join(temp.path, second.diskPathRel), 'utf8')).toBe('"two"');
  });

  it('keeps diskPathRel of the longest session key within the evidence id limit', async () => {
    const outcome = await writeOffload({
      dataDir: temp.path,
      sessionKey: 'k'.repeat(512),
      traceId: 't'.repeat(128),
      toolCallId: 'c'.repeat(200),
      seq: 99_999,
      ts: Date.now(),
      text: '"x"',
    });
    expect(outcome.resolved).toBe(true);
    // The evidence store keeps id-like strings of at most 128 characters.
    expect(outcome.diskPathRel).toMatch(/^[A-Za-z0-9_.:@/#%+=-]{1,128}$/);
  });
});
