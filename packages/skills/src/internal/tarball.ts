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

/**
 * Lists a gzip (or plain) tarball's entries in memory: nothing touches the disk before the
 * scan. Unpacking stops past `maxUnpackedBytes`, so a compression bomb costs at most that.
 * A single top-level folder (`package/`, `<name>/`) is stripped.
 * @throws {SkillsError} `INVALID_ARCHIVE` when it is no tarball or unpacks too large.
 */
export async function readTarball(bytes: Buffer, maxUnpackedBytes: number): Promise<SkillFile[]> {
  const files: SkillFile[] = [];
  let unpacked = 0;
  let tooLarge = false;
  // Loaded on the first import: a daemon that never imports a skill archive never pays for tar.
  const { Parser } = await import('tar');
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({
      strict: true,
      // Extended headers only name paths and times; a large one is an attack on the parser.
      maxMetaEntrySize: 64 * 1024,
      onReadEntry: (entry: ReadEntry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (chunk: Buffer) => {
          unpacked += chunk.length;
          if (unpacked > maxUnpackedBytes) tooLarge = true;
          else chunks.push(chunk);
        });
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
    parser.on('error', reject);
    parser.on('end', () => resolve());
    parser.end(bytes);
  }).catch((error: unknown) => {
    throw new SkillsError('INVALID_ARCHIVE', 'The registry answered something that is not a tarball', {
      cause: error,
    });
  });
  if (tooLarge)
    throw new SkillsError('INVALID_ARCHIVE', `The archive unpacks to more than ${maxUnpackedBytes} bytes`);
  if (files.length === 0) throw new SkillsError('INVALID_ARCHIVE', 'The archive is empty');
  return stripTopFolder(files);
}

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
