import { afterEach, describe, expect, it } from 'vitest';
import { facts, questions } from '../bench/qa-set.js';
import { seededRandom } from '../bench/data.js';
import { createOpenAiEmbedder } from './embedder.js';
import { type FakeEmbeddingsServer, startFakeEmbeddingsServer } from './internal/fake-embeddings.js';
import { openTemporaryDatabase, type TemporaryDatabase } from './internal/test-support.js';
import { createMemoryStore, type MemoryStore } from './memory-store.js';

// The plumbing of the semantic path end to end: an OpenAI-compatible endpoint (a
// local server computing real vectors with a small deterministic model of meaning),
// the HTTP embedder, the index and the auto fusion, against the lexical default on
// the same entries and questions.
//
// This tests the plumbing, not recall: the fake concept model's synonym groups
// (src/internal/fake-embeddings.ts) were written from these very questions, so a
// paraphrase it finds is found by construction. Recall of a real model is measured
// only by the benchmarks with MEMORY_EMBEDDINGS_URL set; never cite this test for it.

const cleanup: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

// Everyday chatter around the facts: some of it shares words with the questions.
const CHATTER = (
  'the a we our you it was is today tomorrow weather rain sunny lunch meeting project team call later ' +
  'nice great thanks sure maybe week weekend morning evening office home coffee train dinner plans ' +
  'talk soon send file update news shop market music film game city park walk friend family time'
).split(' ');

function distractors(count: number): string[] {
  const random = seededRandom(7);
  return Array.from({ length: count }, () =>
    Array.from(
      { length: 6 + Math.floor(random() * 8) },
      () => CHATTER[Math.floor(random() * CHATTER.length)],
    ).join(' '),
  );
}

async function filled(store: MemoryStore): Promise<Map<string, string>> {
  const stored = await store.storeMany(facts.map((fact) => ({ content: fact.content })));
  await store.storeMany(distractors(1000).map((content) => ({ content })));
  await store.ready();
  return new Map(facts.map((fact, index) => [fact.key, stored[index]!.id]));
}

async function recallAt5(store: MemoryStore, ids: Map<string, string>): Promise<number> {
  let hits = 0;
  for (const { question, answer } of questions) {
    const { results } = await store.search({ query: question, limit: 5 });
    if (results.some((result) => result.id === ids.get(answer))) hits++;
  }
  return hits / questions.length;
}

async function open(database: TemporaryDatabase, options: Parameters<typeof createMemoryStore>[0]) {
  const store = await createMemoryStore(options);
  cleanup.push(() => database.remove());
  cleanup.push(() => store.close());
  return store;
}

describe('the semantic path (plumbing, not a recall measure)', () => {
  let server: FakeEmbeddingsServer;

  it('never scores below the lexical default on the same data, and finds paraphrases it cannot', async () => {
    server = await startFakeEmbeddingsServer(256);
    cleanup.push(() => server.close());
    const lexicalDb = await openTemporaryDatabase('memory-lexical-');
    const lexical = await open(lexicalDb, { database: lexicalDb.db });
    const semanticDb = await openTemporaryDatabase('memory-semantic-');
    const semantic = await open(semanticDb, {
      database: semanticDb.db,
      embedder: createOpenAiEmbedder({ baseUrl: server.baseUrl, model: 'concept', dimensions: 256 }),
    });
    const lexicalIds = await filled(lexical);
    const semanticIds = await filled(semantic);

    const lexicalRecall = await recallAt5(lexical, lexicalIds);
    const semanticRecall = await recallAt5(semantic, semanticIds);
    expect(server.requests).toBeGreaterThan(0);
    expect(semanticRecall).toBeGreaterThanOrEqual(lexicalRecall);

    // "boss" shares no word with the fact about the manager: only meaning finds it.
    const boss = await semantic.search({ query: 'Who is my boss?', limit: 5 });
    expect(boss.recall.lanes).toEqual(['fts', 'vector']);
    expect(boss.results.map((result) => result.id)).toContain(semanticIds.get('manager'));
    const lexicalBoss = await lexical.search({ query: 'Who is my boss?', limit: 5 });
    expect(lexicalBoss.results.map((result) => result.id)).not.toContain(lexicalIds.get('manager'));
  });
});
