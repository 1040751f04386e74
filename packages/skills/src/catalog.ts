import { createHash } from 'node:crypto';
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isSkillsError } from './errors.js';
import { MAX_SKILL_MD_BYTES, type ParsedSkill, parseSkillMd } from './skill-md.js';

/**
 * Where a skill comes from, in precedence order: the agent's workspace, the daemon directory,
 * imports, then procedures the agent learned (read-only, from the learning layer).
 */
export type SkillSource = 'workspace' | 'daemon' | 'imported' | 'learned';

/**
 * Trust tier of a skill: `workspace` (the agent's own folder), `operator` (the daemon
 * directory), the importing registry's tier (`verified`, `community`, `untrusted`), or
 * `learned` (a procedure the agent learned from its own successful turns).
 */
export type SkillTrust = 'workspace' | 'operator' | 'verified' | 'community' | 'untrusted' | 'learned';

/** A skill as `skills.list` and `skills.get` show it. */
export interface SkillInfo {
  /** The front matter's name, or the folder name when the skill does not parse. */
  name: string;
  description: string | null;
  version: string | null;
  source: SkillSource;
  trust: SkillTrust;
  /** `sha256:<hex>`: of the imported archive for imports, of `SKILL.md` otherwise; null when unreadable. */
  hash: string | null;
  /** The permission manifest: tools the skill needs. */
  requiredTools: string[];
  /** Why the skill cannot be used (parse error, missing SKILL.md); null when it loads. */
  loadError: string | null;
  /** The registry of an imported skill. */
  registry?: string;
  /** Set when a skill of the same name from a higher-precedence source hides this one. */
  shadowedBy?: SkillSource;
}

/** A listed skill with what only the package uses: its folder and parsed file. */
export interface LoadedSkill {
  info: SkillInfo;
  dir: string;
  parsed?: ParsedSkill;
}

interface CacheEntry {
  mtimeMs: number;
  size: number;
  parsed?: ParsedSkill;
  error?: string;
  hash: string;
}

/** Parses each `SKILL.md` once per change (mtime and size), so listing a hundred skills per turn stays cheap. */
export class SkillFolderCache {
  readonly #entries = new Map<string, CacheEntry>();

  /** The skills in the sub-folders of `root`, each parsed or with its load error; none when `root` is absent. */
  async scan(root: string, source: SkillSource, trust: SkillTrust): Promise<LoadedSkill[]> {
    let names: { name: string; isDirectory(): boolean; isSymbolicLink(): boolean }[];
    try {
      names = await readdir(root, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const out: LoadedSkill[] = [];
    for (const entry of names.sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.')) continue;
      if (entry.isSymbolicLink()) {
        out.push(
          failed(
            entry.name,
            join(root, entry.name),
            source,
            trust,
            'symlinked skill folders are not followed',
          ),
        );
      } else if (entry.isDirectory()) {
        out.push(await this.#load(join(root, entry.name), entry.name, source, trust));
      }
    }
    return out;
  }

  async #load(dir: string, folder: string, source: SkillSource, trust: SkillTrust): Promise<LoadedSkill> {
    const file = join(dir, 'SKILL.md');
    let stat: Awaited<ReturnType<typeof lstat>>;
    try {
      stat = await lstat(file);
    } catch {
      return failed(folder, dir, source, trust, 'SKILL.md is missing');
    }
    if (!stat.isFile()) return failed(folder, dir, source, trust, 'SKILL.md is not a regular file');
    if (stat.size > MAX_SKILL_MD_BYTES) {
      return failed(folder, dir, source, trust, `SKILL.md is larger than ${MAX_SKILL_MD_BYTES} bytes`);
    }
    let entry = this.#entries.get(file);
    if (!entry || entry.mtimeMs !== stat.mtimeMs || entry.size !== stat.size) {
      const bytes = await readFile(file);
      entry = { mtimeMs: stat.mtimeMs, size: stat.size, hash: sha256(bytes) };
      try {
        entry.parsed = parseSkillMd(bytes.toString('utf8'));
        if (entry.parsed.name !== folder) {
          entry.error = `name '${entry.parsed.name}' does not match its folder '${folder}'`;
          delete entry.parsed;
        }
      } catch (error) {
        entry.error = isSkillsError(error) ? error.message : 'SKILL.md could not be read';
      }
      this.#entries.set(file, entry);
    }
    if (!entry.parsed) return { ...failed(folder, dir, source, trust, entry.error ?? 'invalid') };
    const { parsed } = entry;
    return {
      dir,
      parsed,
      info: {
        name: parsed.name,
        description: parsed.description,
        version: parsed.version ?? null,
        source,
        trust,
        hash: entry.hash,
        requiredTools: parsed.requiredTools,
        loadError: null,
      },
    };
  }
}

function failed(
  folder: string,
  dir: string,
  source: SkillSource,
  trust: SkillTrust,
  error: string,
): LoadedSkill {
  return {
    dir,
    info: {
      name: folder,
      description: null,
      version: null,
      source,
      trust,
      hash: null,
      requiredTools: [],
      loadError: error,
    },
  };
}

/** `sha256:<hex>` of some bytes. */
export function sha256(bytes: Buffer | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}
