/** A turn's resolved outcome (the IncidentReport's `learning.outcome`). */
export type TurnOutcome = 'success' | 'failure' | 'corrected' | 'unknown';

/** Where an outcome came from (the IncidentReport's `learning.sources`). */
export type OutcomeSource = 'tool' | 'pipeline' | 'correction' | 'judge' | 'reaction' | 'explicit';

/** What the outcome of a turn is resolved from. */
export interface OutcomeEvidence {
  endReason: string;
  tools: ReadonlyArray<{ name: string; ok: boolean }>;
}

/** End reasons where the pipeline itself failed the turn. */
const PIPELINE_FAILURES = new Set([
  'error',
  'timeout',
  'context_exhausted',
  'output_starved',
  'max_steps',
  'cancelled',
]);

/**
 * A turn's outcome from its own evidence: a pipeline failure (the end reason), else its tool
 * results (all failed: failure; all succeeded: success; mixed: the last call decides), else
 * `unknown` until a later signal (a correction, an explicit word) resolves it.
 */
export function resolveOutcome(evidence: OutcomeEvidence): {
  outcome: TurnOutcome;
  sources: OutcomeSource[];
} {
  if (PIPELINE_FAILURES.has(evidence.endReason)) return { outcome: 'failure', sources: ['pipeline'] };
  const last = evidence.tools.at(-1);
  if (!last) return { outcome: 'unknown', sources: [] };
  return { outcome: last.ok ? 'success' : 'failure', sources: ['tool'] };
}

const CORRECTION =
  /^\s*(no\b|nope\b|wrong\b|that'?s (not|wrong|incorrect)|that is (not|wrong|incorrect)|not what i (asked|meant|wanted)|you (got|did) (it|that) wrong|incorrect\b|actually,? (i|it|that)\b|try again\b|undo\b)/i;
const CONFIRMATION =
  /^\s*(thanks?( you)?|thank you|perfect|great|that (worked|works|did it)|works( now)?|exactly|correct)\b[\s!.,]*/i;

/**
 * What the next user message says about the previous turn: `corrected` when it opens with a
 * correction, `success` when it opens with an explicit confirmation, else nothing.
 */
export function followUpSignal(
  message: string,
): { outcome: 'corrected' | 'success'; source: OutcomeSource } | undefined {
  const head = message.slice(0, 200);
  if (CORRECTION.test(head)) return { outcome: 'corrected', source: 'correction' };
  if (CONFIRMATION.test(head)) return { outcome: 'success', source: 'explicit' };
  return undefined;
}

/** The procedure a turn followed: its distinct tool names in first-use order (at most 8). */
export function procedureSignature(tools: ReadonlyArray<{ name: string }>): string {
  const names: string[] = [];
  for (const tool of tools) if (!names.includes(tool.name)) names.push(tool.name);
  return names.slice(0, 8).join('>');
}

/** Reactions that approve an answer: Slack names and the emoji characters other platforms send. */
const POSITIVE_REACTIONS = new Set([
  '+1',
  'thumbsup',
  'white_check_mark',
  'heavy_check_mark',
  'heart',
  'tada',
  'ok_hand',
  'raised_hands',
  'clap',
  '100',
  '👍',
  '✅',
  '✔️',
  '❤️',
  '❤',
  '🎉',
  '👌',
  '🙌',
  '👏',
  '💯',
]);
/** Reactions that reject an answer. */
const NEGATIVE_REACTIONS = new Set([
  '-1',
  'thumbsdown',
  'x',
  'heavy_multiplication_x',
  'no_entry',
  'no_entry_sign',
  'confused',
  'disappointed',
  '👎',
  '❌',
  '✖️',
  '⛔',
  '🚫',
  '😕',
  '😞',
]);

/**
 * What a user's reaction on the agent's message says about that turn: `success` for an
 * approving emoji, `failure` for a rejecting one, nothing for the rest (skin tones are ignored).
 */
export function reactionSignal(emoji: string): 'success' | 'failure' | undefined {
  const name = emoji
    .trim()
    .replace(/::skin-tone-\d$/, '')
    .replace(/[\u{1F3FB}-\u{1F3FF}]/gu, '');
  if (POSITIVE_REACTIONS.has(name)) return 'success';
  if (NEGATIVE_REACTIONS.has(name)) return 'failure';
  return undefined;
}
