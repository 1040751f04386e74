import type { MemoryStore } from './memory-store.js';
import type { MemoryEntry, RecallRecord } from './types.js';

/** The IncidentReport `recall` block of one session: counts and booleans only. */
export interface RecallBlock {
  recalls: number;
  zeroHits: number;
  lastLanes: Array<'fts' | 'vector'>;
  lastFinalCount: number;
  rerankerAvailable: boolean;
}

/** Options of {@link createAutoRecall}. */
export interface AutoRecallOptions {
  store: MemoryStore;
  /**
   * Memories recalled per turn.
   * @default 5
   */
  limit?: number | undefined;
  /**
   * Results scoring below this are dropped.
   * @default 0
   */
  minScore?: number | undefined;
  /**
   * Longest context text handed to the model.
   * @default 4000
   */
  maxChars?: number | undefined;
  /**
   * Sessions whose recall block is kept (least recently used dropped first).
   * @default 10000
   */
  maxSessions?: number | undefined;
}

/** Recall before an agent turn, and the per-session record the IncidentReport's `recall` block reads. */
export interface AutoRecall {
  /** Recalls for `message`; `context` is a block of text to put before the turn, absent when nothing matched. */
  recall(request: {
    agentId: string;
    sessionKey: string;
    message: string;
    tenant?: string | undefined;
    signal?: AbortSignal | undefined;
  }): Promise<{ context: string | undefined; entries: MemoryEntry[]; record: RecallRecord }>;
  /** The session's recall block, `undefined` when no recall ran in it. */
  stats(sessionKey: string): RecallBlock | undefined;
  /** Forgets a session's block (session reset or delete). */
  forget(sessionKey: string): void;
  /** Applies new `limit`, `minScore` and `maxChars` (absent ones back to their defaults) from the next recall on. */
  applyConfig(settings: Pick<AutoRecallOptions, 'limit' | 'minScore' | 'maxChars'>): void;
}

/** Creates the automatic recall the agent runtime runs before a turn when the agent's config enables it. */
export function createAutoRecall(options: AutoRecallOptions): AutoRecall {
  const { store } = options;
  let limit = options.limit ?? 5;
  let minScore = options.minScore ?? 0;
  let maxChars = options.maxChars ?? 4000;
  const maxSessions = options.maxSessions ?? 10_000;
  const blocks = new Map<string, RecallBlock>();
  return {
    async recall(request) {
      const { results, recall } = await store.search({
        query: request.message.slice(0, 10_000),
        limit,
        agentId: request.agentId,
        tenant: request.tenant ?? 'default',
        signal: request.signal,
      });
      const entries = results.filter((entry) => entry.score >= minScore);
      const previous = blocks.get(request.sessionKey);
      blocks.delete(request.sessionKey);
      blocks.set(request.sessionKey, {
        recalls: (previous?.recalls ?? 0) + 1,
        zeroHits: (previous?.zeroHits ?? 0) + (entries.length === 0 ? 1 : 0),
        lastLanes: recall.lanes,
        lastFinalCount: entries.length,
        rerankerAvailable: store.hasReranker && !recall.rerankFellBack,
      });
      while (blocks.size > maxSessions) blocks.delete(blocks.keys().next().value as string);
      let context: string | undefined;
      if (entries.length > 0) {
        const lines: string[] = ['Relevant memories (most relevant first):'];
        let used = lines[0]!.length;
        for (const entry of entries) {
          const line = `- ${entry.content.replace(/\s+/g, ' ').trim()}`;
          if (used + line.length + 1 > maxChars) break;
          lines.push(line);
          used += line.length + 1;
        }
        context = lines.length > 1 ? lines.join('\n') : undefined;
      }
      return { context, entries, record: recall };
    },
    stats: (sessionKey) => {
      const block = blocks.get(sessionKey);
      return block === undefined ? undefined : { ...block, lastLanes: [...block.lastLanes] };
    },
    forget: (sessionKey) => {
      blocks.delete(sessionKey);
    },
    applyConfig: (settings) => {
      limit = settings.limit ?? 5;
      minScore = settings.minScore ?? 0;
      maxChars = settings.maxChars ?? 4000;
    },
  };
}
