import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { temporaryDirectory } from './internal/test-support.js';
import { rollFile } from './roll.js';

let directory: ReturnType<typeof temporaryDirectory>;
let live: string;

beforeEach(() => {
  directory = temporaryDirectory('roll');
  live = join(directory.path, 'stream.jsonl');
});
afterEach(() => directory.remove());

const names = () => readdirSync(directory.path).sort();

describe('rollFile', () => {
  it('shifts the parts that exist, plain or gzipped, and makes the live file .1', async () => {
    writeFileSync(`${live}.1`, 'one');
    writeFileSync(`${live}.2.gz`, 'two');
    writeFileSync(live, 'live');
    expect(await rollFile(live, live, { maxFiles: 5 })).toBe(`${live}.1`);
    expect(names()).toEqual(['stream.jsonl.1', 'stream.jsonl.2', 'stream.jsonl.3.gz']);
    expect(readFileSync(`${live}.1`, 'utf8')).toBe('live');
    expect(readFileSync(`${live}.2`, 'utf8')).toBe('one');
    expect(readFileSync(`${live}.3.gz`, 'utf8')).toBe('two');
  });

  it('deletes the part at maxFiles and leaves parts past a gap where they are', async () => {
    for (const n of [1, 2, 4]) writeFileSync(`${live}.${n}`, `part ${n}`);
    writeFileSync(live, 'live');
    await rollFile(live, live, { maxFiles: 2 });
    expect(names()).toEqual(['stream.jsonl.1', 'stream.jsonl.2', 'stream.jsonl.4']);
    expect(readFileSync(`${live}.2`, 'utf8')).toBe('part 1');
  });

  it('gzips a copy renamed aside into .1.gz, and deletes it when no part is kept', async () => {
    const aside = join(directory.path, 'aside');
    writeFileSync(aside, 'rolled text');
    expect(await rollFile(aside, live, { maxFiles: 3, compress: true })).toBe(`${live}.1.gz`);
    expect(gunzipSync(readFileSync(`${live}.1.gz`)).toString()).toBe('rolled text');
    writeFileSync(aside, 'dropped');
    expect(await rollFile(aside, live, { maxFiles: 0 })).toBeUndefined();
    expect(names()).toEqual(['stream.jsonl.1.gz']);
  });
});
