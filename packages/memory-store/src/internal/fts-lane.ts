import type { SqlValue } from '@agentd/storage';
import type { RecallRecord } from '../types.js';
import type { MemoryContext } from './context.js';
import { expandRanking, mergeQuery } from './expansion.js';
import { ftsArg, ftsStatements, rankArg } from './fts.pg.js';
import type { Lane } from './fusion.js';
import { asksWhen, mentionsTime, speakersAsked, topicWords, transcriptLine } from './lexical.js';
import { nameClasses } from './names.js';
import { proximityShare, proximityStems } from './proximity.js';
import { chunks } from './rows.js';
import { synonymTerms } from './synonyms.js';
import { orExpression, queryTerms } from './text.js';

// The full-text lane: FTS5 bm25 over the question's topic words, then each
// candidate's score lifted by what bm25 cannot see: the neighbouring turns of
// the same conversation (an answer often needs the question it answers), the
// speaker a question names, and for a question asking "when", whether the entry
// anchors anything in time.

type Filter = { where: string; args: Record<string, SqlValue> };

interface CandidateRow {
  seq: number;
  content: string;
  agent_id: string;
  tenant: string;
  session_key: string | null;
  created_at: number;
  pass: number;
  missing: number;
}

/** The FTS5 MATCH for a question, or undefined when it has no words. */
export async function selectiveMatch(ctx: MemoryContext, query: string): Promise<string | undefined> {
  const { nameClasses: classesOn, namePlaces } = ctx.settings.recall;
  const classes = classesOn ? nameClasses(query, namePlaces) : [];
  const terms = ctx.settings.recall.stopwords
    ? [...new Set([...topicWords(query), ...classes])].map((word) => `"${word.replaceAll('"', '""')}"`)
    : queryTerms([query, ...classes].join(' '));
  if (terms.length <= 1) return orExpression(terms);
  // Words found in more than a tenth of a large store barely move bm25 (their
  // idf is near zero) but make FTS5 score most of the table: left out while rarer ones exist.
  const total = await ctx.db.get<{ n: number }>('SELECT max(seq) AS n FROM memory_entries');
  const ceiling = Math.max(1000, Number(total?.n ?? 0) / 10);
  const fts = ftsStatements(ctx.db.dialect);
  const counts = await ctx.db.query<{ term: string; n: number }>(
    terms.map(() => fts.documentFrequency).join(' UNION ALL '),
    terms.flatMap((term) => [term, ftsArg(ctx.db.dialect, term)]),
  );
  const selective = counts
    .filter((row) => Number(row.n) > 0 && Number(row.n) <= ceiling)
    .map((row) => row.term);
  return orExpression(selective.length > 0 ? selective : terms);
}

/** Runs the full-text lane: candidates by bm25, rescored, filtered, best `wanted` first. */
export async function runFtsLane(
  ctx: MemoryContext,
  query: string,
  match: string,
  filter: Filter,
  wanted: number,
  record: RecallRecord,
): Promise<Lane> {
  // Ranking inside FTS5 alone, then the filter on the winners, is several times
  // faster than joining every match to its entry; a selective filter that
  // leaves too few winners gets the joined query.
  const asked = Math.max(wanted * 4, 200);
  const fts = ftsStatements(ctx.db.dialect);
  let ranked = await ctx.db.query<{ seq: number; relevance: number }>(fts.rank, {
    match: rankArg(ctx.db.dialect, match),
    limit: asked,
  });
  let rows = await candidateRows(ctx, ranked, filter);
  const passing = ranked.filter((row) => rows.get(Number(row.seq))?.pass === 1).length;
  if (passing < wanted && ranked.length === asked) {
    ranked = await ctx.db.query<{ seq: number; relevance: number }>(fts.rankFiltered(filter.where), {
      ...filter.args,
      match: rankArg(ctx.db.dialect, match),
      limit: asked,
    });
    rows = await candidateRows(ctx, ranked, filter);
  }
  if (ctx.settings.recall.expansionWeight > 0) {
    ranked = await expandRanking(ctx, query, ranked, (seq) => rows.get(seq)?.content, asked);
    const missing = ranked.filter((row) => !rows.has(Number(row.seq)));
    for (const [seq, row] of await candidateRows(ctx, missing, filter))
      if (!rows.has(seq)) rows.set(seq, row);
  }
  const { synonymWeight, synonymSenses, synonymsPerWord, derivations } = ctx.settings.recall;
  if (synonymWeight > 0) {
    const terms = synonymTerms(query, synonymSenses, synonymsPerWord, derivations);
    ranked = await mergeQuery(ctx, ranked, terms, synonymWeight, asked);
    const missing = ranked.filter((row) => !rows.has(Number(row.seq)));
    for (const [seq, row] of await candidateRows(ctx, missing, filter))
      if (!rows.has(seq)) rows.set(seq, row);
  }
  const lane = rescore(ctx, query, ranked, rows).slice(0, wanted);
  record.missingEmbeddings = lane.filter((candidate) => rows.get(candidate.seq)?.missing === 1).length;
  return lane;
}

/**
 * The ranked entries by seq, with whether each passes the filter, and the
 * neighbouring turns of those that are turns of a conversation (a session key
 * or a transcript header): other entries have no neighbours worth reading.
 */
async function candidateRows(
  ctx: MemoryContext,
  ranked: Array<{ seq: number }>,
  filter: Filter,
): Promise<Map<number, CandidateRow>> {
  const out = await loadRows(
    ctx,
    ranked.map((row) => Number(row.seq)),
    filter,
  );
  const { neighbourWeight, neighbourSpan } = ctx.settings.recall;
  if (neighbourWeight === 0 || neighbourSpan === 0) return out;
  const neighbours = new Set<number>();
  for (const row of out.values()) {
    if (row.session_key === null && transcriptLine(row.content).speaker === undefined) continue;
    for (let distance = 1; distance <= neighbourSpan; distance++) {
      for (const seq of [row.seq - distance, row.seq + distance]) if (!out.has(seq)) neighbours.add(seq);
    }
  }
  for (const [seq, row] of await loadRows(ctx, [...neighbours], filter)) out.set(seq, row);
  return out;
}

async function loadRows(
  ctx: MemoryContext,
  seqs: number[],
  filter: Filter,
): Promise<Map<number, CandidateRow>> {
  const out = new Map<number, CandidateRow>();
  for (const group of chunks(seqs, 500)) {
    // The opening of each entry is enough for its header, a time mention and feedback
    // words, and bounds what a search reads however long entries are.
    const found = await ctx.db.query<CandidateRow>(
      `SELECT e.seq, substr(e.content, 1, 1000) AS content, e.agent_id, e.tenant, e.session_key, e.created_at,
         (${filter.where}) AS pass,
         (e.embedding IS NULL OR e.embedding_model IS NULL OR e.embedding_model <> :model) AS missing
       FROM memory_entries e WHERE e.seq IN (${group.map((_, i) => `:s${i}`).join(', ')})`,
      {
        ...filter.args,
        model: ctx.embedder.model,
        ...Object.fromEntries(group.map((seq, i) => [`s${i}`, seq])),
      },
    );
    for (const row of found) {
      out.set(Number(row.seq), {
        ...row,
        seq: Number(row.seq),
        created_at: Number(row.created_at),
        pass: Number(row.pass),
        missing: Number(row.missing),
      });
    }
  }
  return out;
}

/**
 * Two entries stored one after the other are turns of one conversation when
 * they share agent, tenant and session, were stored close in time, and are
 * known to be turns: a session key names their conversation, or both are
 * transcript lines (`[date] Speaker: text`) of the same date. Unrelated notes
 * stored back to back lend each other nothing.
 */
function sameConversation(ctx: MemoryContext, a: CandidateRow, b: CandidateRow): boolean {
  if (a.agent_id !== b.agent_id || a.tenant !== b.tenant || a.session_key !== b.session_key) return false;
  if (Math.abs(a.created_at - b.created_at) > ctx.settings.recall.neighbourWindowMs) return false;
  const lineA = transcriptLine(a.content);
  const lineB = transcriptLine(b.content);
  if (lineA.date !== undefined && lineB.date !== undefined && lineA.date !== lineB.date) return false;
  return a.session_key !== null || (lineA.speaker !== undefined && lineB.speaker !== undefined);
}

/** Scores every candidate and passing neighbour; best first. */
function rescore(
  ctx: MemoryContext,
  query: string,
  ranked: Array<{ seq: number; relevance: number }>,
  rows: Map<number, CandidateRow>,
): Lane {
  const { neighbourWeight, neighbourSpan, speakerWeight, timeWeight, proximityWeight } = ctx.settings.recall;
  const stems = proximityWeight > 0 ? proximityStems(query) : [];
  const top = Math.max(...ranked.map((row) => Number(row.relevance)), Number.MIN_VALUE);
  // bm25 normalised by the best match, so the weights mean the same on every question.
  const own = new Map<number, number>();
  for (const row of ranked) own.set(Number(row.seq), Number(row.relevance) / top);
  const speakers = new Set<string>();
  for (const row of rows.values()) {
    const speaker = transcriptLine(row.content).speaker;
    if (speaker !== undefined) speakers.add(speaker);
  }
  const asked = speakersAsked(query, speakers);
  const when = asksWhen(query);
  const scored: Lane = [];
  for (const row of rows.values()) {
    if (row.pass !== 1) continue;
    let score = own.get(row.seq) ?? 0;
    if (neighbourWeight > 0) {
      // A turn two away lends the square of the weight, and only through the turn between.
      for (const direction of [-1, 1]) {
        let previous = row;
        for (let distance = 1; distance <= neighbourSpan; distance++) {
          const neighbour = rows.get(row.seq + direction * distance);
          if (neighbour === undefined || !sameConversation(ctx, previous, neighbour)) break;
          score += neighbourWeight ** distance * (own.get(neighbour.seq) ?? 0);
          previous = neighbour;
        }
      }
    }
    if (score === 0) continue;
    const line = transcriptLine(row.content);
    if (speakerWeight > 0 && line.speaker !== undefined && asked.has(line.speaker)) score += speakerWeight;
    if (when && timeWeight > 0 && mentionsTime(line.text)) score += timeWeight;
    if (stems.length > 1) score += proximityWeight * proximityShare(stems, row.content);
    scored.push({ seq: row.seq, relevance: score });
  }
  return scored.sort((a, b) => b.relevance - a.relevance || a.seq - b.seq);
}
