/**
 * memory-store benchmark, one run, figures side by side:
 *
 * 1. The ANN choice (see ann.ts): libsql's native vector index variants,
 *    usearch HNSW, quantized and float exact search, on clustered 384-d vectors.
 * 2. The store at 10k and 100k entries with the built-in 384-d embedder:
 *    insert throughput through storeMany, hybrid search p50/p95, recall@10 of
 *    the index against exact float search in libsql on the same stored vectors,
 *    index rebuild time at start, database bytes per entry. The ANN recall aim
 *    (> 0.95) is judged on the approximate index (HNSW, the graph that answers
 *    in sub-millisecond time once a store is too large to scan), built over the
 *    whole store at each size; the default `quantized` index is an exact scan of
 *    int8 vectors, so its recall only measures what quantization loses.
 * 3. Retrieval quality on the shipped question set (qa-set.ts) among
 *    distractors: recall@5 and MRR of full-text only, vector only and hybrid
 *    (reciprocal rank fusion and convex fusion).
 *
 * Flags: --sizes=10000,100000  --index=quantized,hnsw  --ann-size=20000  --ann-libsql=2000  --queries=200  --skip-ann
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import { printComparison, printFigure } from '../../../tooling/bench/harness.js';
import { createHashingEmbedder, createMemoryStore, type MemoryStore } from '../src/index.js';
import { AnnIndex, QuantizedIndex, type VectorIndex } from '../src/internal/ann-index.js';
import { fromBlob, toBlob } from '../src/internal/vectors.js';
import { runAnnComparison } from './ann.js';
import { percentile, recallAt, seededRandom } from './data.js';
import { facts, questions } from './qa-set.js';

function flag(name: string, fallback: string): string {
  const found = process.argv.find((value) => value.startsWith(`--${name}=`));
  return found === undefined ? fallback : found.slice(name.length + 3);
}

const sizes = flag('sizes', '10000,100000').split(',').map(Number);
const annSize = Number(flag('ann-size', '20000'));
const annLibsql = Number(flag('ann-libsql', '2000'));
const queryCount = Number(flag('queries', '200'));
const skipAnn = process.argv.includes('--skip-ann');

// Conversational text has a Zipfian vocabulary: a few very common words and a
// long tail. Pseudo-words from syllables give a 20,000-word vocabulary with
// ranks drawn from a Zipf(1) distribution, so full-text postings have a
// realistic shape (a tiny vocabulary would make every query match half the store).
const SYLLABLES = 'ka lo mi ne su ta ri po an el or us ve di fa go hu ji be co'.split(' ');
const VOCABULARY = Array.from({ length: 20_000 }, (_, rank) => {
  let word = '';
  let value = rank + 1;
  do {
    word += SYLLABLES[value % SYLLABLES.length];
    value = Math.floor(value / SYLLABLES.length);
  } while (value > 0);
  return word;
});
const HARMONIC = VOCABULARY.reduce((sum, _, rank) => sum + 1 / (rank + 1), 0);

function zipfWord(random: () => number): string {
  let target = random() * HARMONIC;
  for (let rank = 0; rank < VOCABULARY.length; rank++) {
    target -= 1 / (rank + 1);
    if (target <= 0) return VOCABULARY[rank]!;
  }
  return VOCABULARY[VOCABULARY.length - 1]!;
}

function sentence(random: () => number): string {
  const length = 8 + Math.floor(random() * 14);
  const words: string[] = [];
  for (let index = 0; index < length; index++) words.push(zipfWord(random));
  return words.join(' ');
}

function fileBytes(path: string): number {
  let total = 0;
  for (const suffix of ['', '-wal']) {
    try {
      total += statSync(path + suffix).size;
    } catch {
      // No WAL after a truncating checkpoint.
    }
  }
  return total;
}

async function measureStore(size: number, kind: 'quantized' | 'hnsw'): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'memory-bench-'));
  const path = join(dir, 'memory.db');
  try {
    const db = await openDatabase({ url: `file:${path}` });
    // The cache would double every stored vector; the store's own bytes are what is measured here.
    const settings = { cache: { maxPersisted: 0, maxEntries: 1000 }, index: { kind } };
    const store = await createMemoryStore({ database: db, ...settings });
    const random = seededRandom(size);
    const contents = Array.from({ length: size }, () => sentence(random));
    const began = performance.now();
    for (let start = 0; start < size; start += 1000) {
      await store.storeMany(contents.slice(start, start + 1000).map((content) => ({ content })));
    }
    const insertMs = performance.now() - began;
    await db.execute('PRAGMA wal_checkpoint(TRUNCATE)');
    const bytes = fileBytes(path);
    const contentBytes = contents.reduce((sum, content) => sum + Buffer.byteLength(content), 0) / size;

    // A query recalls words of something stored, plus a word of its own.
    const queries = Array.from({ length: queryCount }, () => {
      const source = contents[Math.floor(random() * size)]!.split(' ');
      const picked = [0, 1, 2].map(() => source[Math.floor(random() * source.length)]!);
      return [...picked, zipfWord(random)].join(' ');
    });
    const latencies: number[] = [];
    // The earlier recall (RRF of both lanes, plain bm25 lane), interleaved with
    // the shipped one so machine load weighs on both alike: the cost of the newer lane.
    const previousLatencies: number[] = [];
    const previous = {
      ...settings,
      fusion: 'rrf' as const,
      recall: { stopwords: false, neighbourWeight: 0, speakerWeight: 0, timeWeight: 0 },
    };
    for (const query of queries) {
      store.applyConfig(settings);
      const start = performance.now();
      await store.search({ query, limit: 10 });
      latencies.push(performance.now() - start);
      store.applyConfig(previous);
      const previousStart = performance.now();
      await store.search({ query, limit: 10 });
      previousLatencies.push(performance.now() - previousStart);
    }
    store.applyConfig(settings);

    // Recall of the index against exact search over the same stored vectors,
    // with the index rebuilt from libsql exactly as the store does at start.
    const embedder = createHashingEmbedder();
    const index: VectorIndex =
      kind === 'quantized'
        ? new QuantizedIndex(384)
        : new AnnIndex({
            dimensions: 384,
            connectivity: 16,
            expansionAdd: 128,
            expansionSearch: 128,
            quantization: 'f16',
          });
    const rebuildBegan = performance.now();
    let after = 0;
    for (;;) {
      const rows = await db.query<{ seq: number; embedding: unknown }>(
        'SELECT seq, embedding FROM memory_entries WHERE seq > ? ORDER BY seq LIMIT 2000',
        [after],
      );
      if (rows.length === 0) break;
      index.add(
        'default\u0000default',
        rows.map((row) => Number(row.seq)),
        rows.map((row) => fromBlob(row.embedding)!),
      );
      after = Number(rows[rows.length - 1]!.seq);
    }
    const rebuildMs = performance.now() - rebuildBegan;
    let recall = 0;
    const probes = queries.slice(0, 50);
    const probeVectors = await embedder.embed(probes);
    const exactLatencies: number[] = [];
    const indexLatencies: number[] = [];
    for (const vector of probeVectors) {
      const start = performance.now();
      const exact = await db.query<{ seq: number }>(
        'SELECT seq FROM memory_entries ORDER BY vector_distance_cos(embedding, ?) LIMIT 10',
        [toBlob(vector)],
      );
      exactLatencies.push(performance.now() - start);
      const indexBegan = performance.now();
      const approximate = index.search(['default\u0000default'], vector, 10).map((hit) => hit.seq);
      indexLatencies.push(performance.now() - indexBegan);
      recall += recallAt(
        approximate,
        exact.map((row) => Number(row.seq)),
      );
    }
    recall /= probes.length;

    // The speed and size aims are the default index's (quantized). The ANN recall aim is the
    // approximate index's (HNSW): the quantized index scans every vector, so its recall is not an
    // ANN figure and is printed without the aim.
    const aim = <T>(value: T): T | undefined => (kind === 'quantized' ? value : undefined);
    console.log(`\nstore at ${size} entries, index ${kind} (384-d, built-in embedder, batches of 1000)`);
    printFigure('insert throughput', (size * 1000) / insertMs, 'entries/s', aim({ above: 5000 }));
    printFigure('hybrid search p50', percentile(latencies, 50), 'ms', aim({ below: 20 }));
    printFigure('hybrid search p95', percentile(latencies, 95), 'ms');
    printFigure('hybrid p50, earlier recall (RRF, bm25)', percentile(previousLatencies, 50), 'ms');
    printFigure('exact vector scan in libsql p50 (fallback)', percentile(exactLatencies, 50), 'ms');
    // In percent: the harness prints one decimal, which as a fraction hid 0.94 behind "0.9".
    if (kind === 'hnsw') printFigure('ANN (HNSW) recall@10 vs exact', recall * 100, '%', { above: 95 });
    else printFigure('int8 scan (exact) recall@10 vs float exact', recall * 100, '%');
    printFigure('vector index query p50', percentile(indexLatencies, 50), 'ms');
    printFigure('index rebuild from libsql at start', rebuildMs, 'ms');
    printFigure('database bytes per entry', bytes / size, 'B');
    printFigure('aim: 3 x raw vector + content', 3 * 384 * 4 + contentBytes, 'B');
    printFigure('ratio bytes / (raw vector + content)', bytes / size / (384 * 4 + contentBytes), 'x', {
      below: 3,
    });
    await store.close();
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureQuality(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'memory-qa-'));
  try {
    const db = await openDatabase({ url: `file:${join(dir, 'qa.db')}` });
    const random = seededRandom(99);
    const stores: Array<[string, MemoryStore, Array<'fts' | 'vector'>]> = [];
    const rrf = await createMemoryStore({ database: db, fusion: 'rrf' });
    const convex = await createMemoryStore({ database: db, fusion: 'convex' });
    const ids = new Map<string, string>();
    const stored = await rrf.storeMany(facts.map((fact) => ({ content: fact.content })));
    facts.forEach((fact, index) => {
      ids.set(fact.key, stored[index]!.id);
    });
    await rrf.storeMany(Array.from({ length: 2000 }, () => ({ content: sentence(random) })));
    await convex.close();
    const convexStore = await createMemoryStore({ database: db, fusion: 'convex' });
    await convexStore.ready();
    const shipped = await createMemoryStore({ database: db });
    await shipped.ready();
    stores.push(['hybrid, shipped default (auto)', shipped, ['fts', 'vector']]);
    stores.push(['full-text only', rrf, ['fts']]);
    stores.push(['vector only (lexical hashing embedder)', rrf, ['vector']]);
    stores.push(['hybrid, reciprocal rank fusion (k=60)', rrf, ['fts', 'vector']]);
    stores.push(['hybrid, convex fusion (0.5/0.5)', convexStore, ['fts', 'vector']]);
    console.log(
      `\nretrieval quality: ${questions.length} questions, ${facts.length} facts among 2000 distractors`,
    );
    const rows = [];
    for (const [name, store, lanes] of stores) {
      let hits = 0;
      let reciprocal = 0;
      for (const { question, answer } of questions) {
        const { results } = await store.search({ query: question, limit: 10, lanes });
        const rank = results.findIndex((result) => result.id === ids.get(answer));
        if (rank >= 0 && rank < 5) hits++;
        if (rank >= 0) reciprocal += 1 / (rank + 1);
      }
      const recall5 = hits / questions.length;
      const mrr = reciprocal / questions.length;
      rows.push({ name, recall5, mrr });
      console.log(`  ${name.padEnd(44)} recall@5 ${recall5.toFixed(3)}  MRR@10 ${mrr.toFixed(3)}`);
    }
    const baseline = rows.find((row) => row.name === 'full-text only')!;
    for (const row of rows.filter((candidate) => candidate !== baseline)) {
      console.log(
        `  ${`${row.name} vs full-text`.padEnd(60)} recall@5 x${(row.recall5 / baseline.recall5).toFixed(2)}  MRR x${(row.mrr / baseline.mrr).toFixed(2)}`,
      );
    }
    await rrf.close();
    await shipped.close();
    await convexStore.close();
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (!skipAnn) {
  console.log(
    `\nANN comparison: ${annSize} clustered 384-d vectors (libsql native index on ${annLibsql}), ${queryCount} queries`,
  );
  const rows = await runAnnComparison({ size: annSize, libsqlSize: annLibsql, queries: queryCount });
  printComparison(
    'ANN inserts per second, ratio to libsql_vector_idx defaults',
    rows.map((row) => ({
      name: row.name,
      ops: row.entries,
      ms: (row.entries * 1000) / row.insertsPerSec,
      opsPerSec: row.insertsPerSec,
    })),
    'libsql_vector_idx defaults',
  );
}
const kinds = flag('index', 'quantized,hnsw').split(',') as Array<'quantized' | 'hnsw'>;
for (const size of sizes) {
  for (const kind of kinds) await measureStore(size, kind);
}
await measureQuality();
