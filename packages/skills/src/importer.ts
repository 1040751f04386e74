import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readBoundedStream } from '@agentd/input-guards';
import { sha256 } from './catalog.js';
import type { RegistryConfig, SkillsSection } from './config.js';
import { isSkillsError, SkillsError } from './errors.js';
import { readTarball } from './internal/tarball.js';
import { scanSkillFiles, type SkillFile } from './scan.js';
import { type ParsedSkill, parseSkillMd } from './skill-md.js';

/** A fetched, scanned skill, not yet written. */
export interface VettedSkill {
  registry: RegistryConfig;
  version: string;
  hash: string;
  parsed: ParsedSkill;
  files: SkillFile[];
}

/**
 * Fetches `<base>/<name>/<version>.tar.gz` from an allowlisted registry: no redirects (they
 * could leave the allowlisted host), a deadline, and a byte cap enforced while reading.
 * @throws {SkillsError} `FETCH_FAILED`
 */
export async function fetchArchive(
  registry: RegistryConfig,
  name: string,
  version: string,
  settings: SkillsSection['import'],
  fetchImpl: typeof fetch,
): Promise<Buffer> {
  const base = registry.base.endsWith('/') ? registry.base : `${registry.base}/`;
  const url = new URL(`${encodeURIComponent(name)}/${encodeURIComponent(version)}.tar.gz`, base);
  // One deadline for the headers and the body alike: a registry that stalls mid-body is as late
  // as one that never answers.
  const signal = AbortSignal.timeout(settings.timeoutMs);
  let response: Response;
  try {
    response = await fetchImpl(url, { redirect: 'manual', signal });
  } catch (error) {
    throw unreachable(registry, settings.timeoutMs, signal, error);
  }
  if (response.status !== 200 || !response.body) {
    await response.body?.cancel();
    const what = response.status === 404 ? 'has no such skill version' : `answered HTTP ${response.status}`;
    throw new SkillsError('FETCH_FAILED', `Registry ${registry.id} ${what}: ${name}@${version}`, {
      data: { registry: registry.id, status: response.status },
    });
  }
  const read = await readBoundedStream(response.body, settings.maxArchiveBytes).catch((error: unknown) => {
    throw unreachable(registry, settings.timeoutMs, signal, error);
  });
  if (!read.ok) {
    throw new SkillsError(
      'FETCH_FAILED',
      `Archive from ${registry.id} exceeds ${settings.maxArchiveBytes} bytes`,
      {
        data: { registry: registry.id },
      },
    );
  }
  return read.bytes;
}

/**
 * `FETCH_FAILED` for a request or body read that failed: past the deadline it says so
 * (`data.errorKind: 'timeout'`), otherwise the registry could not be reached (`network`).
 */
function unreachable(
  registry: RegistryConfig,
  timeoutMs: number,
  signal: AbortSignal,
  error: unknown,
): SkillsError {
  if (signal.aborted)
    return new SkillsError('FETCH_FAILED', `Registry ${registry.id} did not answer within ${timeoutMs} ms`, {
      cause: error,
      data: { registry: registry.id, errorKind: 'timeout', timeoutMs },
    });
  return new SkillsError('FETCH_FAILED', `Registry ${registry.id} could not be reached`, {
    cause: error,
    data: { registry: registry.id, errorKind: 'network' },
  });
}

/**
 * Unpacks the archive in memory, checks its `SKILL.md` (present, valid, of the asked name) and
 * scans every file. Nothing is written here.
 * @throws {SkillsError} `INVALID_ARCHIVE`, `INVALID_SKILL`, `SCAN_REFUSED` (with `data.findings`)
 */
export async function vetArchive(
  bytes: Buffer,
  name: string,
  registry: RegistryConfig,
  settings: SkillsSection['import'],
): Promise<VettedSkill> {
  const files = await readTarball(bytes, settings.limits.maxTotalBytes + settings.limits.maxFileBytes);
  const skillMd = files.find((file) => file.path === 'SKILL.md');
  if (skillMd?.type !== 'file') {
    throw new SkillsError('INVALID_ARCHIVE', 'The archive has no SKILL.md at its root');
  }
  let parsed: ParsedSkill;
  try {
    parsed = parseSkillMd(skillMd.data.toString('utf8'));
  } catch (error) {
    if (isSkillsError(error)) throw error;
    throw new SkillsError('INVALID_SKILL', 'SKILL.md could not be read', { cause: error });
  }
  if (parsed.name !== name) {
    throw new SkillsError('INVALID_SKILL', `SKILL.md names '${parsed.name}', not the requested '${name}'`);
  }
  const findings = scanSkillFiles(files, settings.limits, parsed.executables);
  if (findings.length > 0) {
    throw new SkillsError('SCAN_REFUSED', `Skill ${name} refused: ${findings.length} scan finding(s)`, {
      data: { findings: findings.slice(0, 100) },
    });
  }
  return { registry, version: parsed.version ?? 'unversioned', hash: sha256(bytes), parsed, files };
}

/**
 * Writes a vetted skill to `<importedDir>/<name>`: into a private temporary folder first, then
 * swapped in by rename, so a failure leaves the previous version whole. Files are 0600,
 * declared executables 0700, folders 0700.
 */
export async function installSkill(importedDir: string, skill: VettedSkill): Promise<void> {
  await mkdir(importedDir, { recursive: true, mode: 0o700 });
  const nonce = randomBytes(6).toString('hex');
  const staging = join(importedDir, `.staging-${nonce}`);
  const target = join(importedDir, skill.parsed.name);
  const old = join(importedDir, `.old-${nonce}`);
  const executables = new Set(skill.parsed.executables);
  try {
    await mkdir(staging, { mode: 0o700 });
    for (const file of skill.files) {
      const path = join(staging, ...file.path.split('/'));
      if (file.type === 'directory') {
        await mkdir(path, { recursive: true, mode: 0o700 });
        continue;
      }
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await writeFile(path, file.data, { mode: 0o600, flag: 'wx' });
      if (executables.has(file.path)) await chmod(path, 0o700);
    }
    const hadOld = await rename(target, old).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    await rename(staging, target);
    if (hadOld) await rm(old, { recursive: true, force: true });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
