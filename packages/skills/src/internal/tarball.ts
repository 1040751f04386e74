import { createGunzip, type Gunzip } from 'node:zlib';
import type { ReadEntry } from 'tar';
import { SkillsError } from '../errors.js';
import type { SkillFile } from '../scan.js';

const TYPES: Record<string, SkillFile['type']> = {
  File: 'file',
  OldFile: 'file',
  ContiguousFile: 'file',
  Directory: 'directory',
  SymbolicLink: 'symlink',
  Link: 'link',
};

const GZIP = [0x1f, 0x8b];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];

const startsWith = (bytes: Uint8Array, magic: number[]) => magic.every((byte, at) => bytes[at] === byte);

/**
 * Lists a gzip (or plain) tarball's entries in memory: nothing touches the disk before the
 * scan. The gunzip is streamed into the tar parser and stopped as soon as its output passes
 * `maxUnpackedBytes`, so a compression bomb costs at most that (and no more time than it
 * takes to inflate it). An archive compressed twice, or with zstd, is refused: tar's parser
 * would inflate the inner layer itself, past the budget.
 * A single top-level folder (`package/`, `<name>/`) is stripped.
 * @throws {SkillsError} `INVALID_ARCHIVE` when it is no tarball or unpacks too large.
 */
export async function readTarball(bytes: Buffer, maxUnpackedBytes: number): Promise<SkillFile[]> {
  const files: SkillFile[] = [];
  // Loaded on the first import: a daemon that never imports a skill archive never pays for tar.
  const { Parser } = await import('tar');
  const parser = new Parser({
    strict: true,
    // Only plain tar reaches the parser: it must not decompress anything on its own.
    zstd: false,
    brotli: false,
    // Extended headers only name paths and times; a large one is an attack on the parser.
    maxMetaEntrySize: 64 * 1024,
    onReadEntry: (entry: ReadEntry) => {
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () => {
        files.push({
          path: entry.path.replace(/^\.\//, '').replace(/\/+$/, ''),
          type: TYPES[entry.type] ?? 'other',
          mode: entry.mode ?? 0o644,
          data: Buffer.concat(chunks),
        });
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('error', reject);
    parser.on('end', () => resolve());
    if (!startsWith(bytes, GZIP)) {
      if (startsWith(bytes, ZSTD))
        reject(new SkillsError('INVALID_ARCHIVE', 'The archive is not gzip-compressed'));
      else if (bytes.length > maxUnpackedBytes) reject(tooLarge(maxUnpackedBytes));
      else parser.end(bytes);
      return;
    }
    const gunzip = streamGunzip(bytes, maxUnpackedBytes, parser, reject);
    // A parser that gave up (not a tarball) needs nothing more inflated.
    parser.on('error', () => gunzip.destroy());
  }).catch((error: unknown) => {
    if (error instanceof SkillsError) throw error;
    throw new SkillsError('INVALID_ARCHIVE', 'The registry answered something that is not a tarball', {
      cause: error,
    });
  });
  if (files.length === 0) throw new SkillsError('INVALID_ARCHIVE', 'The archive is empty');
  return stripTopFolder(files);
}

/**
 * Inflates `bytes` chunk by chunk into `parser`, counting what comes out: past `budget` the
 * inflater is destroyed (nothing more is inflated) and `fail` gets `INVALID_ARCHIVE`.
 * Answers the inflater, for the caller to stop it early.
 */
function streamGunzip(
  bytes: Buffer,
  budget: number,
  parser: { write(chunk: Buffer): unknown; end(): unknown },
  fail: (error: unknown) => void,
): Gunzip {
  const gunzip = createGunzip({ chunkSize: 64 * 1024 });
  let unpacked = 0;
  gunzip.on('data', (chunk: Buffer) => {
    if (unpacked === 0 && (startsWith(chunk, GZIP) || startsWith(chunk, ZSTD))) {
      gunzip.destroy();
      fail(new SkillsError('INVALID_ARCHIVE', 'The archive is compressed twice'));
      return;
    }
    unpacked += chunk.length;
    if (unpacked > budget) {
      gunzip.destroy();
      fail(tooLarge(budget));
      return;
    }
    parser.write(chunk);
  });
  gunzip.on('end', () => parser.end());
  gunzip.on('error', fail);
  gunzip.end(bytes);
  return gunzip;
}

const tooLarge = (budget: number) =>
  new SkillsError('INVALID_ARCHIVE', `The archive unpacks to more than ${budget} bytes`, {
    data: { maxUnpackedBytes: budget },
  });

function stripTopFolder(files: SkillFile[]): SkillFile[] {
  const tops = new Set(files.map((file) => file.path.split('/')[0]));
  const [top] = tops;
  if (
    tops.size !== 1 ||
    top === undefined ||
    files.some((file) => file.path === top && file.type !== 'directory')
  ) {
    return files.filter((file) => !(file.type === 'directory' && file.path === ''));
  }
  return files
    .filter((file) => file.path !== top)
    .map((file) => ({ ...file, path: file.path.slice(top.length + 1) }));
}
