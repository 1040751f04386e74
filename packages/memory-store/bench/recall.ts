/**
 * Recall benchmark on the development split of the long-term conversational
 * memory benchmark, by the protocol of `../shared/data/memory-dev/README.md`:
 * every turn stored as one entry (`[<date>] <speaker>: <text>`, one store call
 * per turn, in order), every scored question searched with limit 5, a hit when
 * any result is an evidence turn. One run prints, side by side, plain FTS5
 * BM25, the shipped default and each ablation (the default with one mechanism
 * turned off), overall and by question category.
 *
 * The data is not in the repository (evaluation-only licence): the benchmark
 * looks in `--data=<dir>`, `$MEMORY_DEV_DIR`, or `<repo>/../shared/data/memory-dev`,
 * and skips with a message when none is there.
 *
 * Flags: --data=<dir>  --only=<name fragment>  --misses=<variant name fragment> (prints missed questions)
 *
 * MEMORY_RECALL_PG_URL=postgres://… runs the same protocol on PostgreSQL: each store gets a
 * database of its own made on that server (dropped after). Plain BM25 is FTS5's and is left out.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Database, openDatabase } from '@agentd/storage';
import {
  createLexicalReranker,
  createMemoryStore,
  createOpenAiEmbedder,
  type Embedder,
  type MemoryStore,
  type MemoryStoreSettings,
} from '../src/index.js';
import { startFakeEmbeddingsServer } from '../src/internal/fake-embeddings.js';
import { words } from '../src/internal/text.js';
import { CATEGORY_NAMES, type Conversation, loadConversations, type Question, Score } from './locomo.js';
import { paraphrases } from './paraphrases.js';

function flag(name: string): string | undefined {
  return process.argv.find((value) => value.startsWith(`--${name}=`))?.slice(name.length + 3);
}

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = resolve(
  flag('data') ??
    process.env.MEMORY_DEV_DIR ??
    join(here, '..', '..', '..', '..', 'shared', 'data', 'memory-dev'),
);
const only = flag('only');
const pgServer = process.env.MEMORY_RECALL_PG_URL;
const missesOf = flag('misses');

/** A configuration measured: store settings applied in place, and the lanes searched. */
interface Variant {
  name: string;
  settings?: MemoryStoreSettings;
  lanes?: Array<'fts' | 'vector'>;
  /**
   * `concept`: a semantic embedder behind a local OpenAI-compatible endpoint serving a small
   * deterministic model (src/internal/fake-embeddings.ts); `endpoint`: a real one named by
   * MEMORY_EMBEDDINGS_URL / _MODEL / _DIMENSIONS / _KEY. @default 'hashing'
   */
  embedder?: 'hashing' | 'concept' | 'endpoint';
  /** Plain FTS5 BM25 over the store's own index instead of the store's recall. */
  bm25?: true;
  /**
   * The settings change what is indexed at write: the variant gets a store of its own, made
   * and filled with them (other variants share a store filled with the defaults).
   */
  atWrite?: true;
}

const OFF = { stopwords: false, neighbourWeight: 0, neighbourSpan: 0, speakerWeight: 0, timeWeight: 0 };

const variants: Variant[] = [
  { name: 'BM25 alone (FTS5 porter, words ORed)', bm25: true },
  { name: 'shipped default', settings: {} },
  { name: 'default, full-text lane only', settings: {}, lanes: ['fts'] },
  { name: 'default, vector lane only (hashing)', settings: {}, lanes: ['vector'] },
  { name: '- stop words kept in the match', settings: { recall: { stopwords: false } } },
  { name: '- no neighbouring turns', settings: { recall: { neighbourWeight: 0 } } },
  { name: '- one neighbouring turn each side, not two', settings: { recall: { neighbourSpan: 1 } } },
  { name: '- no speaker match', settings: { recall: { speakerWeight: 0 } } },
  { name: '- no time match for "when"', settings: { recall: { timeWeight: 0 } } },
  { name: '- no WordNet synonyms', settings: { recall: { synonymWeight: 0 } } },
  {
    name: "- no WordNet classes of the question's names",
    settings: { recall: { nameClasses: false } },
  },
  { name: '+ WordNet synonyms at 0.3, not 0.2', settings: { recall: { synonymWeight: 0.3 } } },
  {
    name: '+ WordNet synonyms, 2 senses, 8 a word',
    settings: { recall: { synonymSenses: 2, synonymsPerWord: 8 } },
  },
  {
    name: '+ WordNet derivations in the synonym query',
    settings: { recall: { derivations: true } },
  },
  {
    name: '+ WordNet places of names (Rome: Italy)',
    settings: { recall: { namePlaces: true } },
    atWrite: true,
  },
  {
    name: '+ proximity of topic words, 0.2 (off by default)',
    settings: { recall: { proximityWeight: 0.2 } },
  },
  { name: '+ proximity of topic words, 0.5', settings: { recall: { proximityWeight: 0.5 } } },
  {
    name: '+ expansion from co-occurrence, 0.1 (off by default)',
    settings: { recall: { expansionWeight: 0.1 } },
  },
  { name: '+ expansion from co-occurrence, 0.3', settings: { recall: { expansionWeight: 0.3 } } },
  {
    name: '+ lexical reranker (off by default) over the top 20',
    settings: { reranker: createLexicalReranker() },
  },
  {
    name: '+ lexical reranker with proximity 0.1',
    settings: { reranker: createLexicalReranker({ proximityWeight: 0.1 }) },
  },
  {
    name: '+ lexical reranker over the top 50',
    settings: { reranker: createLexicalReranker(), rerankCandidates: 50 },
  },
  { name: 'lanes fused by RRF k=60 (old default)', settings: { fusion: 'rrf' } },
  { name: 'lanes fused convex, vector 0.1', settings: { fusion: 'convex', vectorWeight: 0.1 } },
  { name: 'old recall (all of the above off, RRF)', settings: { fusion: 'rrf', recall: OFF } },
  { name: 'hybrid, semantic (concept model endpoint), auto', embedder: 'concept', settings: {} },
  { name: 'hybrid, semantic, vector weight 0.05', embedder: 'concept', settings: { vectorWeight: 0.05 } },
  { name: 'hybrid, semantic, vector weight 0.1', embedder: 'concept', settings: { vectorWeight: 0.1 } },
  {
    name: 'hybrid, semantic, vector weight 0.15 (old auto)',
    embedder: 'concept',
    settings: { vectorWeight: 0.15 },
  },
  { name: 'hybrid, semantic, vector weight 0.3', embedder: 'concept', settings: { vectorWeight: 0.3 } },
  {
    name: 'vector lane only, semantic (concept model)',
    embedder: 'concept',
    settings: {},
    lanes: ['vector'],
  },
  ...(process.env.MEMORY_EMBEDDINGS_URL === undefined
    ? []
    : [
        { name: 'hybrid, $MEMORY_EMBEDDINGS_URL embedder', embedder: 'endpoint', settings: {} } as Variant,
        {
          name: 'vector lane only, $MEMORY_EMBEDDINGS_URL',
          embedder: 'endpoint',
          settings: {},
          lanes: ['vector'],
        } as Variant,
      ]),
  ...sweep(),
];

function sweep(): Variant[] {
  const raw = process.env.RECALL_SWEEP;
  if (raw === undefined) return [];
  return (JSON.parse(raw) as Array<[string, MemoryStoreSettings, Array<'fts' | 'vector'>?]>).map(
    ([name, settings, lanes]) => ({
      name,
      settings: settings.reranker
        ? { ...settings, reranker: createLexicalReranker(settings.reranker as never) }
        : settings,
      embedder: (process.env.SWEEP_EMBEDDER ?? 'hashing') as 'hashing',
      ...(lanes ? { lanes } : {}),
    }),
  );
}

/** Plain BM25: the question's words ORed against the store's FTS5 table, best 5. */
async function bm25(db: Database, question: string): Promise<string[]> {
  const terms = [...new Set(words(question))].map((word) => `"${word.replaceAll('"', '""')}"`);
  if (terms.length === 0) return [];
  const rows = await db.query<{ id: string }>(
    `SELECT e.id FROM memory_fts JOIN memory_entries e ON e.seq = memory_fts.rowid
     WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts) LIMIT 5`,
    [terms.join(' OR ')],
  );
  return rows.map((row) => row.id);
}

async function ingest(store: MemoryStore, conversation: Conversation): Promise<Map<string, string>> {
  await store.flush();
  // One call per turn, in order; the store coalesces concurrent calls into
  // transactions without reordering them.
  const stored = await Promise.all(conversation.turns.map((turn) => store.store({ content: turn.content })));
  const diaOf = new Map<string, string>();
  stored.forEach(({ id }, index) => {
    diaOf.set(id, conversation.turns[index]!.diaId);
  });
  await store.ready();
  return diaOf;
}

function embedderFor(kind: 'hashing' | 'concept' | 'endpoint', fakeUrl: string): Embedder | undefined {
  if (kind === 'concept')
    return createOpenAiEmbedder({ baseUrl: fakeUrl, model: 'concept', dimensions: 256 });
  if (kind === 'hashing') return undefined;
  return createOpenAiEmbedder({
    baseUrl: process.env.MEMORY_EMBEDDINGS_URL!,
    model: process.env.MEMORY_EMBEDDINGS_MODEL ?? 'default',
    dimensions: Number(process.env.MEMORY_EMBEDDINGS_DIMENSIONS ?? 768),
    apiKey: process.env.MEMORY_EMBEDDINGS_KEY,
  });
}

async function runQuestions(
  store: MemoryStore,
  db: Database,
  variant: Variant,
  conversation: Conversation,
  diaOf: Map<string, string>,
  questions: Question[],
  score: Score,
): Promise<void> {
  for (const qa of questions) {
    const ids = variant.bm25
      ? await bm25(db, qa.question)
      : (
          await store.search({
            query: qa.question,
            limit: 5,
            ...(variant.lanes === undefined ? {} : { lanes: variant.lanes }),
          })
        ).results.map((result) => result.id);
    const rank = ids.findIndex((id) => qa.evidence.includes(diaOf.get(id) ?? ''));
    score.add(qa.category, rank);
    if (missesOf !== undefined && variant.name.includes(missesOf) && (rank < 0 || rank >= 5)) {
      console.log(
        `miss ${conversation.name} [${qa.category}] ${qa.question} (evidence ${qa.evidence.join(', ')})`,
      );
    }
  }
}

async function main(): Promise<void> {
  const conversations = loadConversations(dataDir);
  if (conversations === undefined) {
    console.log(
      `recall benchmark skipped: no development set at ${dataDir} (pass --data=<dir> or set MEMORY_DEV_DIR)`,
    );
    return;
  }
  const chosen = variants.filter(
    (variant) =>
      (only === undefined || variant.name.includes(only) || variant.bm25) &&
      !(variant.bm25 && pgServer !== undefined),
  );
  // Folds: each conversation's own questions, and the questions written for this project
  // over all of them (bench/paraphrases.ts), scored apart.
  const folds = [...conversations.map((conversation) => conversation.name), 'own'];
  const scores = new Map(
    chosen.map((variant) => [variant.name, new Map(folds.map((fold) => [fold, new Score()]))]),
  );
  const dir = mkdtempSync(join(tmpdir(), 'memory-recall-'));
  const fake = await startFakeEmbeddingsServer(256);
  try {
    // Variants sharing an embedder share a store filled with the defaults: recall settings
    // change in place. A variant whose settings act at write gets a store of its own.
    const groups = (['hashing', 'concept', 'endpoint'] as const).flatMap((kind) => {
      const ofKind = chosen.filter((variant) => (variant.embedder ?? 'hashing') === kind);
      return [
        { kind, variants: ofKind.filter((variant) => !variant.atWrite), settings: {} },
        ...ofKind
          .filter((variant) => variant.atWrite)
          .map((variant) => ({ kind, variants: [variant], settings: variant.settings ?? {} })),
      ];
    });
    for (const [at, { kind, variants: group, settings }] of groups.entries()) {
      if (group.length === 0) continue;
      const embedder = embedderFor(kind, fake.baseUrl);
      const { db, drop } = await openBenchDatabase(dir, `${kind}_${at}`);
      const store = await createMemoryStore({ ...settings, database: db, embedder });
      for (const conversation of conversations) {
        const diaOf = await ingest(store, conversation);
        for (const variant of group) {
          store.applyConfig({ ...variant.settings, embedder });
          const byFold = scores.get(variant.name)!;
          const own = paraphrases.filter((qa) => qa.conversation === conversation.name);
          await runQuestions(
            store,
            db,
            variant,
            conversation,
            diaOf,
            conversation.questions,
            byFold.get(conversation.name)!,
          );
          await runQuestions(store, db, variant, conversation, diaOf, own, byFold.get('own')!);
        }
      }
      await store.close();
      await db.close();
      await drop();
    }
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
  report(conversations, folds, chosen, scores);
}

/** The libsql file of one store, or with MEMORY_RECALL_PG_URL a fresh database on that server. */
async function openBenchDatabase(
  dir: string,
  kind: string,
): Promise<{ db: Database; drop: () => Promise<void> }> {
  if (pgServer === undefined) {
    return {
      db: await openDatabase({ url: `file:${join(dir, `${kind}.db`)}` }),
      drop: async () => undefined,
    };
  }
  const name = `agentd_recall_${kind}_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url: pgServer, poolMax: 1 });
  await admin.execute(`CREATE DATABASE ${name}`);
  const url = new URL(pgServer);
  url.pathname = `/${name}`;
  return {
    db: await openDatabase({ url: url.toString() }),
    drop: async () => {
      await admin.execute(`DROP DATABASE ${name}`);
      await admin.close();
    },
  };
}

/** Prints the table: overall on the development questions, by category, then by fold with the spread. */
function report(
  conversations: Conversation[],
  folds: string[],
  chosen: Variant[],
  scores: Map<string, Map<string, Score>>,
): void {
  const development = folds.filter((fold) => fold !== 'own');
  const questionCount = conversations.reduce((sum, conversation) => sum + conversation.questions.length, 0);
  const ownCount = paraphrases.filter((qa) => development.includes(qa.conversation)).length;
  console.log(
    `\n${pgServer === undefined ? 'libsql' : 'PostgreSQL'}: recall on the development set: ${development.join(', ')} (${questionCount} questions, limit 5); ` +
      `own: ${ownCount} questions written for this benchmark over the same sessions`,
  );
  const categories = Object.keys(CATEGORY_NAMES).map(Number);
  const header = [
    'configuration'.padEnd(52),
    'recall@5',
    '  MRR@5',
    ...categories.map((c) => CATEGORY_NAMES[c]!.padStart(11)),
    ...folds.map((fold) => `R@5 ${fold}`.padStart(9)),
    ...folds.map((fold) => `MRR ${fold}`.padStart(9)),
    ' spread',
  ];
  console.log(header.join(' '));
  for (const variant of chosen) {
    const byFold = scores.get(variant.name)!;
    const overall = Score.merge(development.map((fold) => byFold.get(fold)!));
    const recalls = development.map((fold) => byFold.get(fold)!.recall);
    console.log(
      [
        variant.name.padEnd(52),
        overall.recall.toFixed(3).padStart(8),
        overall.mrr.toFixed(3).padStart(7),
        ...categories.map((c) => overall.category(c).toFixed(3).padStart(11)),
        ...folds.map((fold) => byFold.get(fold)!.recall.toFixed(3).padStart(9)),
        ...folds.map((fold) => byFold.get(fold)!.mrr.toFixed(3).padStart(9)),
        (Math.max(...recalls) - Math.min(...recalls)).toFixed(3).padStart(7),
      ].join(' '),
    );
  }
}

await main();
