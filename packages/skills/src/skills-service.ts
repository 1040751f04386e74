import { firstIssueText } from '@agentd/errors';
import { readdir, rm } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { AgentTool, Logger } from '@agentd/contracts';
import { z } from 'zod';
import {
  type LoadedSkill,
  SkillFolderCache,
  sha256,
  type SkillInfo,
  type SkillSource,
  type SkillTrust,
} from './catalog.js';
import { type SkillsSection, skillsSectionSchema } from './config.js';
import { isSkillsError, SkillsError } from './errors.js';
import { fetchArchive, installSkill, vetArchive } from './importer.js';
import { type ImportRecord, readLock, writeLock } from './internal/lock-file.js';
import { type ManifestGate, ManifestLedger } from './manifest-gate.js';
import { skillNameSchema } from './skill-md.js';
import { auditImport, auditRefusal, auditRemoval, type SkillsAudit } from './internal/audit.js';

/** Name of the agent tool that loads a skill's body. */
export const SKILL_READ_TOOL = 'skill_read';

/** Where an agent's workspace keeps its skills: `<dataDir>/workspaces/<agentId>/skills`. */
export function workspaceSkillsDir(dataDir: string, agentId: string): string {
  return join(dataDir, 'workspaces', agentId, 'skills');
}

/** Options of {@link createSkillsService}. */
export interface SkillsServiceOptions {
  /** The daemon's data directory: imports go to `<dataDir>/skills/imported`, the pins to `<dataDir>/skills/skills-lock.json`. */
  dataDir: string;
  /** The `skills` config section (raw; parsed here). */
  section?: unknown;
  /** Receives every import, refusal and removal (the daemon's `audit:event` producer). */
  audit: SkillsAudit;
  /**
   * Tools of `tools` the agent may not use (the runtime's allow-lists). A skill needing one is
   * not offered to that agent and `skill_read` refuses it.
   */
  missingTools?: (agentId: string, tools: readonly string[]) => string[];
  /** An agent's learned procedures (active and stale), listed read-only as source `learned`. */
  learned?: (agentId: string) => Promise<Array<{ name: string; description: string; body: string }>>;
  /** Told of every skill `skill_read` loads (the learning layer counts skill use per turn). */
  onRead?: (traceId: string, name: string) => void;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  now?: () => number;
  logger?: Pick<Logger, 'info' | 'warn'>;
}

/** `skills.import` params. */
export const importParamsSchema = z
  .object({
    registry: z.string().min(1).max(64),
    name: skillNameSchema,
    version: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]*$/)
      .optional(),
    confirm: z.boolean().optional(),
  })
  .strict();

/** What `skills.import` answers. */
export interface ImportResult {
  name: string;
  version: string;
  registry: string;
  trust: string;
  hash: string;
  /** The permission manifest the operator approves by importing. */
  requiredTools: string[];
  files: number;
  /** `pinned` on a first import, `unchanged` when the pin matched, `replaced` after `confirm`. */
  status: 'pinned' | 'unchanged' | 'replaced';
}

/** A skill body as `skill_read` gives it to the model. */
export interface SkillBody {
  name: string;
  version: string | null;
  source: SkillSource;
  trust: SkillTrust;
  requiredTools: string[];
  body: string;
}

/** Skills of agents: listing, details, imports, the `skill_read` tool and the manifest gate. */
export interface SkillsService {
  /** Skills visible to `agentId` (workspace, daemon, imported), or the daemon-wide ones without it. */
  list(agentId?: string): Promise<SkillInfo[]>;
  /** One skill (the one that wins precedence), with its file list. */
  get(name: string, agentId?: string): Promise<SkillInfo & { files: string[] }>;
  /** Fetches, vets, pins and installs a skill from an allowlisted registry; audited either way. */
  import(params: z.input<typeof importParamsSchema>, actor?: { caller?: string }): Promise<ImportResult>;
  /** Removes an imported skill and its pin; audited. */
  remove(name: string, actor?: { caller?: string }): Promise<{ removed: boolean }>;
  /**
   * Removes every imported skill named in `skills.import.blocked` (each audited `skill_remove`
   * with `reason: blocked`); the daemon calls it at start and whenever `skills` is applied.
   * Serialised with imports. Answers the names removed.
   */
  removeBlocked(): Promise<string[]>;
  /** The prompt lines for an agent: each usable skill's name and description, or undefined when none. */
  promptBlock(agentId: string): Promise<string | undefined>;
  /** Imported skills whose recorded registry left the allowlist (the `config_posture:imported_skills` count). */
  importedOutsideAllowlist(): Promise<number>;
  /** The `skill_read` agent tool. */
  readonly tools: AgentTool[];
  /** The gate enforcing imported skills' manifests (add it to the runtime's `toolGates`). */
  readonly gate: ManifestGate;
  /** Applies a new `skills` section (registries, directory, limits) from the next call. */
  applyConfig(section: unknown): void;
}

const PRECEDENCE: SkillSource[] = ['workspace', 'daemon', 'imported', 'learned'];

/** Creates the skills service. Options are validated; the section's errors throw `INVALID_OPTIONS`. */
export function createSkillsService(options: SkillsServiceOptions): SkillsService {
  let section = parseSection(options.section);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const now = options.now ?? Date.now;
  const root = join(options.dataDir, 'skills');
  const importedDir = join(root, 'imported');
  const lockPath = join(root, 'skills-lock.json');
  const cache = new SkillFolderCache();
  const ledger = new ManifestLedger();
  // Imports are serialised: two imports of one name must not race on its folder and pin.
  let importing: Promise<unknown> = Promise.resolve();

  async function loadAll(agentId: string | undefined): Promise<LoadedSkill[]> {
    const lock = await readLock(lockPath);
    const configured = section.directory;
    // A relative directory is relative to the data dir, like every other path of the config.
    const daemonDir =
      configured === undefined
        ? join(root, 'shared')
        : isAbsolute(configured)
          ? configured
          : join(options.dataDir, configured);
    const imported = await cache.scan(importedDir, 'imported', 'untrusted');
    for (const skill of imported) {
      const record = lock.get(skill.info.name);
      if (!record) {
        skill.info.loadError ??= 'not recorded in skills-lock.json (not imported through skills.import)';
        continue;
      }
      skill.info.trust = record.trust as SkillTrust;
      skill.info.registry = record.registry;
      skill.info.hash = record.hash;
    }
    const all = [
      ...(agentId === undefined
        ? []
        : await cache.scan(workspaceSkillsDir(options.dataDir, agentId), 'workspace', 'workspace')),
      ...(await cache.scan(daemonDir, 'daemon', 'operator')),
      ...imported,
      ...(agentId === undefined || !options.learned ? [] : learnedSkills(await options.learned(agentId))),
    ];
    const winner = new Map<string, SkillSource>();
    for (const source of PRECEDENCE) {
      for (const skill of all) {
        if (skill.info.source !== source) continue;
        const first = winner.get(skill.info.name);
        if (first === undefined) winner.set(skill.info.name, source);
        else skill.info.shadowedBy = first;
      }
    }
    return all;
  }

  async function find(name: string, agentId: string | undefined): Promise<LoadedSkill> {
    const skill = (await loadAll(agentId)).find(
      (entry) => entry.info.name === name && !entry.info.shadowedBy,
    );
    if (!skill) throw new SkillsError('SKILL_NOT_FOUND', `Skill not found: ${name}`, { data: { name } });
    return skill;
  }

  /** Drops an imported skill's pin and folder; audited. False when it was not imported. */
  async function removeImported(name: string, refs: Record<string, unknown>): Promise<boolean> {
    const lock = await readLock(lockPath);
    const record = lock.get(name);
    if (!record) return false;
    lock.delete(name);
    await writeLock(lockPath, lock);
    await rm(join(importedDir, name), { recursive: true, force: true });
    auditRemoval(options.audit, { registry: record.registry, skill: name, ...refs });
    options.logger?.info({ registry: record.registry, skill: name }, 'imported skill removed');
    return true;
  }

  const service: SkillsService = {
    async list(agentId) {
      return (await loadAll(agentId)).map((skill) => skill.info);
    },
    async get(name, agentId) {
      const skill = await find(name, agentId);
      return { ...skill.info, files: await listFiles(skill.dir) };
    },
    import(params, actor) {
      const parsed = importParamsSchema.safeParse(params);
      if (!parsed.success) {
        return Promise.reject(
          new SkillsError(
            'INVALID_OPTIONS',
            `skills.import: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
          ),
        );
      }
      const run = importing.then(() =>
        importSkill(
          {
            section: section.import,
            importedDir,
            lockPath,
            audit: options.audit,
            fetch: fetchImpl,
            now,
            ...(options.logger ? { logger: options.logger } : {}),
          },
          parsed.data,
          actor?.caller,
        ),
      );
      importing = run.catch(() => undefined);
      return run;
    },
    async remove(name, actor) {
      return { removed: await removeImported(name, actor?.caller ? { caller: actor.caller } : {}) };
    },
    removeBlocked() {
      const blocked = section.import.blocked;
      const run = importing.then(async () => {
        const removed: string[] = [];
        for (const name of blocked) if (await removeImported(name, { reason: 'blocked' })) removed.push(name);
        return removed;
      });
      importing = run.catch(() => undefined);
      return run;
    },
    async promptBlock(agentId) {
      const usable = (await loadAll(agentId)).filter(
        (skill) =>
          !skill.info.loadError &&
          !skill.info.shadowedBy &&
          (options.missingTools?.(agentId, skill.info.requiredTools).length ?? 0) === 0,
      );
      if (usable.length === 0) return undefined;
      const lines = usable.map((skill) =>
        `- ${skill.info.name}: ${skill.info.description ?? ''}`.replace(/\s+/g, ' '),
      );
      return `Skills you can load with the ${SKILL_READ_TOOL} tool (by name) when a task needs one:\n${lines.join('\n')}`;
    },
    async importedOutsideAllowlist() {
      const allowed = new Set(section.import.registries.map((entry) => entry.id));
      return [...(await readLock(lockPath)).values()].filter((record) => !allowed.has(record.registry))
        .length;
    },
    tools: [],
    gate: ledger.gate(SKILL_READ_TOOL),
    applyConfig(raw) {
      section = parseSection(raw);
    },
  };
  service.tools.push(skillReadTool(find, ledger, options.missingTools, options.onRead));
  return service;
}

/** What one import needs of the service. */
interface ImportDeps {
  section: SkillsSection['import'];
  importedDir: string;
  lockPath: string;
  audit: SkillsAudit;
  fetch: typeof fetch;
  now: () => number;
  logger?: Pick<Logger, 'info'>;
}

/**
 * One import: the allowlist (before any request), fetch, vet, the hash pin, install, the lock
 * file; every refusal and the import itself are audited.
 */
async function importSkill(
  deps: ImportDeps,
  params: z.output<typeof importParamsSchema>,
  caller: string | undefined,
): Promise<ImportResult> {
  const refs = { registry: params.registry, skill: params.name, ...(caller ? { caller } : {}) };
  // The blocklist and the allowlist are checked before anything touches the network.
  if (deps.section.blocked.includes(params.name)) {
    auditRefusal(deps.audit, refs, 'skill_blocked');
    throw new SkillsError('SKILL_BLOCKED', `Skill blocked: ${params.name} (in skills.import.blocked)`, {
      data: { name: params.name },
    });
  }
  const registry = deps.section.registries.find((entry) => entry.id === params.registry);
  if (!registry) {
    auditRefusal(deps.audit, refs, 'registry_not_allowed');
    throw new SkillsError(
      'REGISTRY_NOT_ALLOWED',
      `Registry not allowed: ${params.registry} (not in skills.import.registries)`,
      {
        data: { registry: params.registry },
      },
    );
  }
  try {
    const bytes = await fetchArchive(
      registry,
      params.name,
      params.version ?? 'latest',
      deps.section,
      deps.fetch,
    );
    const vetted = await vetArchive(bytes, params.name, registry, deps.section);
    const lock = await readLock(deps.lockPath);
    const pinned = lock.get(params.name);
    if (pinned && pinned.hash !== vetted.hash && params.confirm !== true) {
      throw new SkillsError(
        'HASH_MISMATCH',
        `Skill ${params.name}: the archive differs from the pinned ${pinned.hash}; re-import with confirm: true to replace it`,
        { data: { pinned: pinned.hash, fetched: vetted.hash, version: vetted.version } },
      );
    }
    const status: ImportResult['status'] = !pinned
      ? 'pinned'
      : pinned.hash === vetted.hash
        ? 'unchanged'
        : 'replaced';
    await installSkill(deps.importedDir, vetted);
    const record: ImportRecord = {
      name: params.name,
      registry: registry.id,
      trust: registry.trust,
      version: vetted.version,
      hash: vetted.hash,
      requiredTools: vetted.parsed.requiredTools,
      importedAt: deps.now(),
      files: vetted.files.filter((file) => file.type === 'file').length,
    };
    lock.set(params.name, record);
    await writeLock(deps.lockPath, lock);
    auditImport(deps.audit, {
      ...refs,
      version: record.version,
      status,
      tools: record.requiredTools.length,
    });
    deps.logger?.info({ registry: registry.id, skill: params.name, status }, 'skill imported');
    const { importedAt: _at, ...answer } = record;
    return { ...answer, status };
  } catch (error) {
    const code = isSkillsError(error) ? error.code : 'INTERNAL';
    const findings = isSkillsError(error) && Array.isArray(error.data?.findings) ? error.data.findings : [];
    auditRefusal(deps.audit, refs, code.toLowerCase(), findings);
    throw error;
  }
}

function skillReadTool(
  find: (name: string, agentId: string) => Promise<LoadedSkill>,
  ledger: ManifestLedger,
  missingTools: SkillsServiceOptions['missingTools'],
  onRead: SkillsServiceOptions['onRead'],
): AgentTool<{ name: string }> {
  return {
    name: SKILL_READ_TOOL,
    // Reads the configured skills' instructions, which hold nothing of any tenant.
    tenantScoped: true,
    description:
      'Loads the instructions of one of your skills by name (the names are listed in your prompt).',
    params: z.object({ name: skillNameSchema }).strict(),
    async handler({ name }, context): Promise<SkillBody> {
      const skill = await find(name, context.agentId);
      if (skill.info.loadError || !skill.parsed) {
        throw new SkillsError(
          'INVALID_SKILL',
          `Skill ${name} cannot be loaded: ${skill.info.loadError ?? 'invalid'}`,
        );
      }
      const missing = missingTools?.(context.agentId, skill.info.requiredTools) ?? [];
      if (missing.length > 0) {
        throw new SkillsError(
          'MISSING_TOOLS',
          `Skill ${name} needs tools this agent may not use: ${missing.join(', ')}`,
          {
            data: { missing },
          },
        );
      }
      // `find` re-stats SKILL.md, so the body is the file's current one.
      const { body } = skill.parsed;
      if (skill.info.source === 'imported' && context.traceId) {
        ledger.load(context.traceId, name, skill.info.requiredTools);
      }
      if (context.traceId) onRead?.(context.traceId, name);
      return {
        name,
        version: skill.info.version,
        source: skill.info.source,
        trust: skill.info.trust,
        requiredTools: skill.info.requiredTools,
        body,
      };
    },
  };
}

/** Learned procedures as skills: read-only, no folder, no tool manifest of their own. */
function learnedSkills(list: Array<{ name: string; description: string; body: string }>): LoadedSkill[] {
  return list.map((entry) => ({
    dir: '',
    parsed: {
      name: entry.name,
      description: entry.description,
      requiredTools: [],
      executables: [],
      body: entry.body,
    },
    info: {
      name: entry.name,
      description: entry.description,
      version: null,
      source: 'learned',
      trust: 'learned',
      hash: sha256(entry.body),
      requiredTools: [],
      loadError: null,
    },
  }));
}

async function listFiles(dir: string): Promise<string[]> {
  if (dir === '') return [];
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) =>
        join(entry.parentPath, entry.name)
          .slice(dir.length + 1)
          .split('\\')
          .join('/'),
      )
      .sort()
      .slice(0, 500);
  } catch {
    return [];
  }
}

function parseSection(raw: unknown): SkillsSection {
  const parsed = skillsSectionSchema.safeParse(raw ?? {});
  if (!parsed.success)
    throw new SkillsError('INVALID_OPTIONS', firstIssueText('skills.', parsed.error.issues));
  return parsed.data;
}
