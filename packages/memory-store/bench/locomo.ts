/**
 * The development split of the long-term conversational memory benchmark
 * (`../shared/data/memory-dev/README.md`): loading it and scoring recall the
 * way its README prescribes. The data is not part of the repository (its
 * licence allows evaluation only); callers skip when it is absent.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One stored turn: its dialogue id and the content the protocol stores. */
export interface Turn {
  diaId: string;
  content: string;
}

/** One scored question. */
export interface Question {
  question: string;
  evidence: string[];
  category: number;
}

/** A conversation: its turns in order and its scored questions. */
export interface Conversation {
  name: string;
  turns: Turn[];
  questions: Question[];
}

/** LoCoMo's category numbers, by name (5, adversarial, is not scored). */
export const CATEGORY_NAMES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
};

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
}

/**
 * Reads every `*.json` conversation in `dir`: sessions in number order, each
 * turn as `[<session date_time>] <speaker>: <text>`; questions with evidence
 * and a category other than 5. `undefined` when the directory is missing.
 */
export function loadConversations(dir: string): Conversation[] | undefined {
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort();
  if (files.length === 0) return undefined;
  return files.map((file) => {
    const raw = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
    const sessions = Object.keys(raw)
      .map((key) => /^session_(\d+)$/.exec(key))
      .filter((match): match is RegExpExecArray => match !== null && Array.isArray(raw[match[0]]))
      .map((match) => Number(match[1]))
      .sort((a, b) => a - b);
    const turns: Turn[] = [];
    for (const session of sessions) {
      const date = String(raw[`session_${session}_date_time`] ?? '');
      for (const turn of raw[`session_${session}`] as RawTurn[]) {
        turns.push({ diaId: turn.dia_id, content: `[${date}] ${turn.speaker}: ${turn.text}` });
      }
    }
    const questions = (raw.qa as Array<Record<string, unknown>>)
      .filter(
        (qa) => qa.category !== 5 && Array.isArray(qa.evidence) && (qa.evidence as unknown[]).length > 0,
      )
      .map((qa) => ({
        question: String(qa.question),
        evidence: (qa.evidence as unknown[]).map(String),
        category: Number(qa.category),
      }));
    return { name: file.replace(/\.json$/, ''), turns, questions };
  });
}

/** Hits and reciprocal ranks, overall and by category. */
export class Score {
  questions = 0;
  hits = 0;
  reciprocal = 0;
  readonly byCategory = new Map<number, { questions: number; hits: number }>();

  /** Records one question: `rank` of its first evidence turn among the results (0-based), or -1. */
  add(category: number, rank: number): void {
    this.questions++;
    const group = this.byCategory.get(category) ?? { questions: 0, hits: 0 };
    group.questions++;
    if (rank >= 0 && rank < 5) {
      this.hits++;
      group.hits++;
      this.reciprocal += 1 / (rank + 1);
    }
    this.byCategory.set(category, group);
  }

  /** The scores of several question sets taken as one. */
  static merge(parts: Score[]): Score {
    const out = new Score();
    for (const part of parts) {
      out.questions += part.questions;
      out.hits += part.hits;
      out.reciprocal += part.reciprocal;
      for (const [category, group] of part.byCategory) {
        const sum = out.byCategory.get(category) ?? { questions: 0, hits: 0 };
        out.byCategory.set(category, {
          questions: sum.questions + group.questions,
          hits: sum.hits + group.hits,
        });
      }
    }
    return out;
  }

  get recall(): number {
    return this.questions === 0 ? 0 : this.hits / this.questions;
  }

  get mrr(): number {
    return this.questions === 0 ? 0 : this.reciprocal / this.questions;
  }

  category(category: number): number {
    const group = this.byCategory.get(category);
    return group === undefined || group.questions === 0 ? Number.NaN : group.hits / group.questions;
  }
}
