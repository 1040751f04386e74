import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SESSION_INDEX_DIR, TRAJECTORY_DIR } from './records.js';
import { sweepEvidence } from './sweep.js';
import { OFFLOAD_DIR } from './offload.js';
import { makeTempDir, removeTempDir } from './testing.js';

const DAY_MS = 86_400_000;
// Real file times: the age rule reads mtimes, so the clock is the real one shifted by whole days.
const NOW = Date.now();
const day = (offset: number) => new Date(NOW + offset * DAY_MS).toISOString().slice(0, 10);

let dataDir: string;

beforeEach(() => {
  dataDir = makeTempDir('evidence-sweep-');
  for (const sub of [SESSION_INDEX_DIR, TRAJECTORY_DIR, OFFLOAD_DIR])
    mkdirSync(join(dataDir, sub), { recursive: true });
});

afterEach(() => removeTempDir(dataDir));

/** Writes a file under the data dir, last modified `ageDays` ago. */
function file(relative: string, text: string, ageDays = 0): string {
  const path = join(dataDir, relative);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  const at = new Date(NOW - ageDays * DAY_MS);
  utimesSync(path, at, at);
  return path;
}

const names = (relative: string) => readdirSync(join(dataDir, relative)).sort();

describe('sweepEvidence', () => {
  it('deletes session-index days, trajectories and offloads older than maxAgeDays', async () => {
    file(`${SESSION_INDEX_DIR}/${day(-40)}.jsonl`, 'a\n', 40);
    file(`${SESSION_INDEX_DIR}/${day(-40)}.jsonl.1.gz`, 'b\n', 40);
    file(`${SESSION_INDEX_DIR}/${day(-5)}.jsonl`, 'c\n', 5);
    file(`${TRAJECTORY_DIR}/old-0123456789abcdef.jsonl`, 'd\n', 31);
    file(`${TRAJECTORY_DIR}/old-0123456789abcdef.jsonl.1`, 'e\n', 32);
    file(`${TRAJECTORY_DIR}/new-0123456789abcdef.jsonl`, 'f\n', 1);
    file(`${TRAJECTORY_DIR}/new-0123456789abcdef.jsonl.1`, 'g\n', 35);
    file(`${OFFLOAD_DIR}/old-session/call-1.json`, '{}', 45);
    file(`${OFFLOAD_DIR}/mixed-session/call-1.json`, '{}', 45);
    file(`${OFFLOAD_DIR}/mixed-session/call-2.json`, '{}', 2);

    const result = await sweepEvidence({
      dataDir,
      rotation: { maxFiles: 5, maxAgeDays: 30, compressAged: false },
      now: () => NOW,
    });

    expect(names(SESSION_INDEX_DIR)).toEqual([`${day(-5)}.jsonl`]);
    expect(names(TRAJECTORY_DIR)).toEqual(['new-0123456789abcdef.jsonl']);
    expect(names(OFFLOAD_DIR)).toEqual(['mixed-session']);
    expect(names(`${OFFLOAD_DIR}/mixed-session`)).toEqual(['call-2.json']);
    expect(result.removedDirs).toEqual([`${OFFLOAD_DIR}/old-session`]);
    expect(result.deleted.filter((entry) => entry.reason === 'age')).toHaveLength(7);
    expect(result.errors).toEqual([]);
  });

  it('keeps maxFiles parts per file and gzips parts and past days, never today or a live trajectory', async () => {
    const today = `${SESSION_INDEX_DIR}/${day(0)}.jsonl`;
    const yesterday = `${SESSION_INDEX_DIR}/${day(-1)}.jsonl`;
    file(today, 'today\n');
    for (let n = 1; n <= 4; n++) file(`${today}.${n}`, `today part ${n}\n`);
    file(yesterday, 'yesterday\n', 1);
    const trajectory = `${TRAJECTORY_DIR}/web_chat-0123456789abcdef.jsonl`;
    file(trajectory, 'live\n');
    file(`${trajectory}.1`, 'part 1\n');
    file(`${trajectory}.2`, 'part 2\n');
    file(`${trajectory}.3`, 'part 3\n');

    const result = await sweepEvidence({
      dataDir,
      rotation: { maxFiles: 2, maxAgeDays: 30, compressAged: true },
      now: () => NOW,
    });

    expect(names(SESSION_INDEX_DIR)).toEqual(
      [`${day(-1)}.jsonl.gz`, `${day(0)}.jsonl`, `${day(0)}.jsonl.1.gz`, `${day(0)}.jsonl.2.gz`].sort(),
    );
    expect(names(TRAJECTORY_DIR)).toEqual([
      'web_chat-0123456789abcdef.jsonl',
      'web_chat-0123456789abcdef.jsonl.1.gz',
      'web_chat-0123456789abcdef.jsonl.2.gz',
    ]);
    expect(gunzipSync(readFileSync(join(dataDir, `${yesterday}.gz`))).toString()).toBe('yesterday\n');
    expect(gunzipSync(readFileSync(join(dataDir, `${trajectory}.2.gz`))).toString()).toBe('part 2\n');
    expect(readFileSync(join(dataDir, today), 'utf8')).toBe('today\n');
    expect(result.deleted.filter((entry) => entry.reason === 'count')).toHaveLength(3);
    expect(result.compressed).toHaveLength(5);
  });

  it('renumbers parts a crash left with a gap, oldest staying oldest, and deletes leftover temporaries', async () => {
    const trajectory = `${TRAJECTORY_DIR}/web_chat-0123456789abcdef.jsonl`;
    file(trajectory, 'live\n');
    file(`${trajectory}.2`, 'newer\n');
    file(`${trajectory}.4.gz`, 'not really gzip');
    file(`${trajectory}.4.gz.tmp`, 'unfinished');
    file(`${trajectory}.rolling`, '');

    const result = await sweepEvidence({
      dataDir,
      rotation: { maxFiles: 5, maxAgeDays: 0, compressAged: false },
      now: () => NOW,
    });

    expect(names(TRAJECTORY_DIR)).toEqual([
      'web_chat-0123456789abcdef.jsonl',
      'web_chat-0123456789abcdef.jsonl.1',
      'web_chat-0123456789abcdef.jsonl.2.gz',
    ]);
    expect(readFileSync(join(dataDir, `${trajectory}.1`), 'utf8')).toBe('newer\n');
    expect(result.renumbered).toHaveLength(2);
    expect(result.deleted).toEqual([
      { path: `${trajectory}.4.gz.tmp`, reason: 'temporary' },
      { path: `${trajectory}.rolling`, reason: 'temporary' },
    ]);
  });

  it('drops the plain copy of a file whose gzipped twin exists', async () => {
    const yesterday = `${SESSION_INDEX_DIR}/${day(-1)}.jsonl`;
    file(yesterday, 'same\n', 1);
    file(`${yesterday}.gz`, 'twin', 1);
    file(`${yesterday}.1`, 'part\n', 1);
    file(`${yesterday}.1.gz`, 'twin', 1);
    const result = await sweepEvidence({ dataDir, now: () => NOW });
    expect(names(SESSION_INDEX_DIR)).toEqual([`${day(-1)}.jsonl.1.gz`, `${day(-1)}.jsonl.gz`]);
    expect(result.deleted.map((entry) => entry.reason).sort()).toEqual(['duplicate', 'duplicate']);
  });

  it('is an empty sweep when the obs directory does not exist', async () => {
    const empty = makeTempDir('evidence-sweep-empty-');
    try {
      const result = await sweepEvidence({ dataDir: empty });
      expect(result).toEqual({ deleted: [], compressed: [], renumbered: [], removedDirs: [], errors: [] });
      expect(existsSync(join(empty, 'obs'))).toBe(false);
    } finally {
      removeTempDir(empty);
    }
  });
});
