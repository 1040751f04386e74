import { appendFile, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { invalid } from '../errors.js';

/** Who made a change: an agent through its tools, or an operator through the RPC methods. */
export type WorkspaceActor =
  | { kind: 'agent'; agentId: string; sessionKey?: string | undefined }
  | { kind: 'operator'; caller?: string | undefined };

/** A change waiting for the next commit. */
export interface PendingEdit {
  ts: number;
  actor: WorkspaceActor;
  action: 'write' | 'edit' | 'delete' | 'reset' | 'restore';
  path: string;
}

/** Trailer lines a commit carries at most; the rest is counted. */
const MAX_TRAILERS = 50;

/** The journal lives in the repository directory, outside the work tree. */
const journalPath = (gitDir: string) => join(gitDir, 'agentd-pending-edits.jsonl');

/** Records a change for the attribution of the next commit. */
export async function recordEdit(gitDir: string, edit: PendingEdit): Promise<void> {
  await appendFile(journalPath(gitDir), `${JSON.stringify(edit)}\n`, { mode: 0o600 });
}

/** Changes recorded since the last commit (a torn last line after a crash is skipped). */
export async function pendingEdits(gitDir: string): Promise<PendingEdit[]> {
  let text: string;
  try {
    text = await readFile(journalPath(gitDir), 'utf8');
  } catch {
    return [];
  }
  const edits: PendingEdit[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      edits.push(JSON.parse(line) as PendingEdit);
    } catch {
      // A half-written line of a crashed append: the change itself is still in the tree.
    }
  }
  return edits;
}

/** Forgets the recorded changes once a commit carries them. */
export async function clearEdits(gitDir: string): Promise<void> {
  await rm(journalPath(gitDir), { force: true });
}

// Control characters other than tab and newline, and the bidirectional overrides that make a
// message display differently from what it says.
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const UNSAFE_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Makes caller text safe as one line of a commit message. */
function oneLine(text: string, max: number): string {
  const flat = text.replace(UNSAFE_CHARS, '').replace(/\s+/g, ' ').trim();
  return [...flat].slice(0, max).join('');
}

/**
 * A commit message from caller text: line endings normalised, control and bidi-override
 * characters removed, trailing spaces and runs of blank lines dropped, then cut at `maxChars`
 * characters. Nothing left is an `INVALID_PARAMS` error naming `message`.
 */
export function sanitiseMessage(raw: string, maxChars: number): string {
  const lines = raw
    .replace(/\r\n?/g, '\n')
    .replace(UNSAFE_CHARS, '')
    .split('\n')
    .map((line) => line.replace(/\s+$/, ''));
  const text = lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const capped = [...text].slice(0, maxChars).join('').trimEnd();
  if (capped === '')
    throw invalid('INVALID_PARAMS', 'message', 'message is empty once control characters are removed');
  return capped;
}

function describeActor(actor: WorkspaceActor): string {
  if (actor.kind === 'agent') {
    const session = actor.sessionKey ? ` (session ${oneLine(actor.sessionKey, 200)})` : '';
    return `agent ${oneLine(actor.agentId, 64)}${session}`;
  }
  return actor.caller ? `operator (token ${oneLine(actor.caller, 100)})` : 'operator';
}

/**
 * The message with one `Workspace-Edit:` trailer per recorded change (at most
 * {@link MAX_TRAILERS}, then a count of the rest), so `git log` shows who changed what.
 */
export function withAttribution(message: string, edits: readonly PendingEdit[]): string {
  if (edits.length === 0) return message;
  const lines = edits
    .slice(0, MAX_TRAILERS)
    .map(
      (edit) => `Workspace-Edit: ${edit.action} ${oneLine(edit.path, 300)} by ${describeActor(edit.actor)}`,
    );
  if (edits.length > MAX_TRAILERS) lines.push(`Workspace-Edit: … and ${edits.length - MAX_TRAILERS} more`);
  return `${message}\n\n${lines.join('\n')}`;
}
