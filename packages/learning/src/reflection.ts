import { isSkillsError, parseSkillMd } from '@agentd/skills';
import type { OutcomeRow, Procedure } from './internal/store.js';

/** The contract's reflection-funnel `admissionOutcome` values (obs rule 13). */
export type AdmissionOutcome =
  | 'admitted'
  | 'no_successes'
  | 'untrusted_origin'
  | 'uncorroborated'
  | 'empty_reflection'
  | 'rejected_name_length'
  | 'rejected_validation';

/** The `reflect:funnel` payload (without `agentId` and `timestamp`). */
export interface FunnelCounts {
  synthesized: number;
  validated: number;
  admitted: number;
  maxClusterCardinality: number;
  distinctTopicKeys: number;
  untrustedDrops: number;
  nameLengthRejections: number;
  skipped: number;
  sourceTrajectoryCount: number;
  totalSourceChars: number;
  admissionOutcome: AdmissionOutcome;
}

/** A cluster of successful turns that followed one procedure. */
export interface Cluster {
  signature: string;
  rows: OutcomeRow[];
  sessions: Set<string>;
}

/** Origins whose input is not the operator's or a user's own: a webhook's payload is untrusted. */
export const UNTRUSTED_ORIGINS: ReadonlySet<string> = new Set(['hook']);

/** Longest learned-procedure name (the skill name rule). */
const MAX_NAME = 64;

/**
 * The funnel's first stages over a sweep's turns: successful ones, untrusted origins dropped,
 * clustered by procedure (signatures already learned are left out), corroborated when a
 * cluster spans `admitAfter` distinct sessions. `earlier` adds, per signature, the sessions of
 * trusted successes that earlier sweeps already read: a procedure repeated across sweep
 * windows (today in one session, tomorrow in another) is corroborated too.
 */
export function clusterSuccesses(
  rows: readonly OutcomeRow[],
  known: readonly Procedure[],
  admitAfter: number,
  earlier: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
): { counts: FunnelCounts; corroborated: Cluster[] } {
  const successes = rows.filter((row) => row.outcome === 'success' && row.signature !== '');
  const trusted = successes.filter((row) => !UNTRUSTED_ORIGINS.has(row.origin));
  const learned = new Set(known.map((procedure) => procedure.signature));
  const clusters = new Map<string, Cluster>();
  for (const row of trusted) {
    if (learned.has(row.signature)) continue;
    const cluster = clusters.get(row.signature) ?? {
      signature: row.signature,
      rows: [],
      sessions: new Set(),
    };
    if (!clusters.has(row.signature))
      for (const session of earlier.get(row.signature) ?? []) cluster.sessions.add(session);
    cluster.rows.push(row);
    cluster.sessions.add(row.sessionKey);
    clusters.set(row.signature, cluster);
  }
  const corroborated = [...clusters.values()].filter((cluster) => cluster.sessions.size >= admitAfter);
  const counts: FunnelCounts = {
    synthesized: 0,
    validated: 0,
    admitted: 0,
    maxClusterCardinality: Math.max(0, ...[...clusters.values()].map((cluster) => cluster.sessions.size)),
    distinctTopicKeys: clusters.size,
    untrustedDrops: successes.length - trusted.length,
    nameLengthRejections: 0,
    skipped: 0,
    sourceTrajectoryCount: trusted.length,
    totalSourceChars: trusted.reduce((sum, row) => sum + row.message.length, 0),
    admissionOutcome:
      successes.length === 0
        ? 'no_successes'
        : trusted.length === 0
          ? 'untrusted_origin'
          : corroborated.length === 0
            ? 'uncorroborated'
            : 'admitted',
  };
  return { counts, corroborated };
}

/** The prompt that asks a model to write a cluster's procedure as a SKILL.md. */
export function reflectionPrompt(cluster: Cluster): string {
  const examples = cluster.rows
    .slice(-5)
    .map((row, index) => `${index + 1}. request: ${row.message.slice(0, 300).replace(/\s+/g, ' ')}`)
    .join('\n');
  return [
    'You are writing down a procedure that worked, so it can be reused.',
    `These requests were each completed successfully by calling the tools ${cluster.signature.split('>').join(', ')} in that order:`,
    examples,
    'Answer with only a SKILL.md file: YAML front matter between --- lines with name (lower-case letters, digits and -; at most 64 characters),',
    'description (one sentence: when to use it) and tools (the list of tool names), then short Markdown steps.',
  ].join('\n');
}

/** What a synthesized SKILL.md became. */
export type Verdict =
  | { ok: true; name: string; description: string; body: string }
  | { ok: false; outcome: 'empty_reflection' | 'rejected_name_length' | 'rejected_validation' };

/**
 * Validates a model's SKILL.md: empty, a name longer than 64 characters, or anything
 * `parseSkillMd` refuses (or a name already taken) is rejected with its funnel outcome.
 */
export function validateReflection(text: string, taken: ReadonlySet<string>): Verdict {
  const trimmed = text.trim().replace(/^```[a-z]*\n([\s\S]*?)\n```$/i, '$1');
  if (trimmed === '') return { ok: false, outcome: 'empty_reflection' };
  const name = /^name:\s*["']?([^"'\n]*)["']?\s*$/m.exec(trimmed)?.[1]?.trim();
  if (name !== undefined && name.length > MAX_NAME) return { ok: false, outcome: 'rejected_name_length' };
  try {
    const skill = parseSkillMd(trimmed);
    if (taken.has(skill.name)) return { ok: false, outcome: 'rejected_validation' };
    return { ok: true, name: skill.name, description: skill.description, body: skill.body };
  } catch (error) {
    if (isSkillsError(error)) return { ok: false, outcome: 'rejected_validation' };
    throw error;
  }
}
