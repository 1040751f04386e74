import { type ConfigStore, ConfigStoreError, type ConfigWriteResult } from '@agentd/config-store';
import { type MethodContext, type ParamIssue, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import type { ConfigAudit } from '@agentd/evidence/audit';
import { methodsOf } from './define.js';

const sectionParams = z.object({ section: z.string().min(1).optional() }).strict();
const shaSchema = z.string().regex(/^[0-9a-f]{4,40}$/i, 'expected a git commit sha (4-40 hex characters)');

/** Turns config-store failures into the wire errors of decisions.md. */
function configRpcError(error: unknown): unknown {
  if (!(error instanceof ConfigStoreError)) return error;
  switch (error.code) {
    case 'VALIDATION': {
      const issues = (error.data as { issues?: ParamIssue[] } | undefined)?.issues ?? [];
      return RpcError.invalidParams(`Invalid params: ${error.message}`, issues);
    }
    case 'SECTION_NOT_FOUND':
      return new RpcError(-32602, `Invalid params: section: ${error.message}`);
    case 'NOT_FOUND':
      return RpcError.notFound('Commit', String((error.data as { sha?: unknown } | undefined)?.sha ?? ''));
    default:
      return error;
  }
}

/** The part of a config store the methods use (any config type). */
export type ConfigMethodsStore = Pick<
  ConfigStore,
  'read' | 'schema' | 'patch' | 'apply' | 'diff' | 'gc' | 'history' | 'rollback' | 'get' | 'set'
>;

/** What a config write records when nothing audits it (embedders, unit use). */
type TrackWrite = Pick<ConfigAudit, 'track' | 'record'>;

const untracked: TrackWrite = {
  track: (_origin, write) => write(),
  record: () => undefined,
};

/**
 * config.*: the ten methods of the contract, each a call into the config store. Every write
 * (`patch`, `apply`, `set`, `rollback`; `gc` changes no config) is recorded by `audit`:
 * method, sections, resulting sha and the caller's token id, never a value.
 */
export function configMethods(deps: {
  store: ConfigMethodsStore;
  /**
   * Checks what a write over RPC would put into the config (the patch, the full config, or
   * the patch a `config.set` makes) and throws an RpcError to refuse it.
   */
  checkWrite?: (
    candidate: Record<string, unknown>,
    mode: 'merge' | 'replace' | 'restore',
  ) => void | Promise<void>;
  /** The config-audit stream (file line and `audit:event` per write). @default records nothing */
  audit?: TrackWrite;
}) {
  const { store } = deps;
  const audit = deps.audit ?? untracked;
  const check = deps.checkWrite ?? (() => undefined);
  /** Runs one write: the policy check first (a refusal is a recorded failure), then the store call. */
  const write = async <T extends ConfigWriteResult>(
    context: MethodContext,
    sections: readonly string[],
    candidate: Record<string, unknown>,
    run: () => Promise<T>,
    mode: 'merge' | 'replace' = 'merge',
  ): Promise<T> => {
    const origin = { method: context.method, tokenId: context.identity.tokenId, sections };
    try {
      await check(candidate, mode);
    } catch (error) {
      audit.record({ ...origin, sections: [...sections], outcome: 'failure', reason: 'write_policy' });
      throw error;
    }
    // Tracked inside the method's error translation, so the audit sees the config store's own error code.
    return audit.track(origin, run);
  };
  const { adminMethod } = methodsOf('config', configRpcError);
  return [
    adminMethod('read', {
      description: 'The whole config or one section, with every credential redacted.',
      params: sectionParams,
      handler: ({ section }) => store.read(section),
    }),
    adminMethod('schema', {
      description: 'JSON Schema of the config, whole or one section.',
      params: sectionParams,
      handler: ({ section }) => store.schema(section),
    }),
    adminMethod('patch', {
      description: 'Deep-merge a patch into the config, validate, persist and commit it.',
      params: z.record(z.string(), z.unknown()),
      handler: (patch, context) => write(context, Object.keys(patch), patch, () => store.patch(patch)),
    }),
    adminMethod('apply', {
      description: 'Replace the whole config with the given object after validating it.',
      params: z.record(z.string(), z.unknown()),
      handler: (config, context) =>
        write(context, Object.keys(config), config, () => store.apply(config), 'replace'),
    }),
    adminMethod('diff', {
      description: 'Unified diff of config.yaml since a commit (default: the last change).',
      params: z.object({ sha: shaSchema.optional() }).strict(),
      handler: ({ sha }) => store.diff(sha),
    }),
    adminMethod('gc', {
      description: 'Garbage-collect the git history of the config.',
      handler: () => store.gc(),
    }),
    adminMethod('history', {
      description: 'Commits of the config history, newest first.',
      params: z.object({ limit: z.number().int().min(1).max(1000).optional() }).strict(),
      handler: ({ limit }) => store.history(limit),
    }),
    adminMethod('rollback', {
      description: 'Restore the config of an earlier commit after validating it against the current schema.',
      params: z.object({ sha: shaSchema }).strict(),
      // What a rollback restores is known only once the store has read the commit.
      handler: ({ sha }, context) =>
        write(context, [], {}, () =>
          store.rollback(sha, { check: (restored) => check(restored, 'restore') }),
        ),
    }),
    adminMethod('get', {
      description: 'Raw section without redaction, or the sanitised whole config.',
      params: sectionParams,
      handler: ({ section }) => store.get(section),
    }),
    adminMethod('set', {
      description: 'Set one key (a dot path inside the section); forwards to config.patch.',
      params: z.object({ section: z.string().min(1), key: z.string().min(1), value: z.unknown() }).strict(),
      handler: ({ section, key, value }, context) =>
        write(context, [section], { [section]: nestAt(key.split('.'), value) }, () =>
          store.set(section, key, value),
        ),
    }),
  ];
}

/** `nestAt(['a','b'], v)` → `{ a: { b: v } }`. */
function nestAt(path: string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, segment) => ({ [segment]: inner }), value);
}
