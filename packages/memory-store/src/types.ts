/** Store statistics (memory.stats, memory.inspect without id); declared in `@agentd/contracts`, which the client shares. */
export type { MemoryStats } from '@agentd/contracts';

/** Where a memory came from: shipped with the agent, learned in conversation, or taken from outside content. */
export type TrustLevel = 'system' | 'learned' | 'external';

/** `memory` is a stored fact; `observation` is consolidated from memories and links back to them. */
export type EntryKind = 'memory' | 'observation';

/** A `memory.search` result, exactly as the contract shapes it. */
export interface MemoryEntry {
  id: string;
  content: string;
  /** Relevance, higher is better; results are sorted by it. */
  score: number;
  /** When the entry was stored, epoch milliseconds. */
  timestamp: number;
}

/** A stored entry with every field (browse, inspect, export). The embedding itself is not shown. */
export interface MemoryRecord {
  id: string;
  agentId: string;
  tenant: string;
  kind: EntryKind;
  content: string;
  /** The session the memory was taken from, if any. */
  sessionKey: string | null;
  tags: string[];
  metadata: Record<string, unknown> | null;
  trust: TrustLevel;
  /** Epoch milliseconds. */
  createdAt: number;
  /** True when a vector of the current embedder's model is stored. */
  embedded: boolean;
}

/** A record with its observation links (memory.inspect of one id). */
export interface MemoryRecordDetail extends MemoryRecord {
  /** For an observation: the entries it was consolidated from. */
  sources: Array<{ id: string; sessionKey: string | null }>;
  /** For a memory: the observations consolidated from it. */
  derived: string[];
}

/** What to store. */
export interface StoreInput {
  content: string;
  /** @default the store's defaultAgentId ('default') */
  agentId?: string | undefined;
  /** @default the store's defaultTenant ('default') */
  tenant?: string | undefined;
  sessionKey?: string | undefined;
  /** @default [] */
  tags?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** @default 'learned' */
  trust?: TrustLevel | undefined;
  /** Epoch milliseconds. @default now() */
  createdAt?: number | undefined;
}

/** Filters shared by search, browse and export. Absent fields do not filter. */
export interface MemoryFilter {
  agentId?: string | undefined;
  tenant?: string | undefined;
  /** Entries carrying every one of these tags. */
  tags?: string[] | undefined;
  /** Created at or after, epoch milliseconds. */
  sinceMs?: number | undefined;
  /** Created before, epoch milliseconds. */
  untilMs?: number | undefined;
  sessionKey?: string | undefined;
  kind?: EntryKind | undefined;
}

/** A recall request. */
export interface SearchInput extends MemoryFilter {
  query: string;
  /** @default 10 (at most 100) */
  limit?: number | undefined;
  /** Lanes to run (a single lane is for comparisons and debugging). @default ['fts', 'vector'] */
  lanes?: Array<'fts' | 'vector'> | undefined;
  /** Set false to skip a configured reranker for this call. @default true */
  rerank?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** Which lanes ran and what they found; the `memory:recalled` payload carries the same counts. */
export interface RecallRecord {
  lanes: Array<'fts' | 'vector'>;
  ftsCandidates: number;
  /** 0 when the vector lane was unavailable. */
  vectorCandidates: number;
  finalCount: number;
  /** The vector lane ran as an exact scan (index still rebuilding, or a selective filter). */
  exact: boolean;
  reranked: boolean;
  rerankFellBack: boolean;
  /** Full-text only because the vector lane failed. */
  degraded: boolean;
  /** Full-text candidates without a vector of the current model. */
  missingEmbeddings: number;
  durationMs: number;
}

/** What `search` answers. */
export interface SearchResult {
  results: MemoryEntry[];
  recall: RecallRecord;
}

/** What `deleteBySession` removed, by the contract's reset_conversation rules 2-3. */
export interface SessionDeleteResult {
  /** Memories with that source session key. */
  memoriesDeleted: number;
  /** Observations deleted: left without sources, or all derived ones with purgeDerived. */
  observationsDeleted: number;
  /** Observations that lost a source and kept others. */
  observationsUnlinked: number;
}
