import { describe, expect, it } from 'vitest';
import { storeEachTest } from './internal/test-support.js';
import type { MemoryStoreSettings } from './memory-store.js';

// What the full-text lane sees beyond bm25: neighbouring turns, the speaker a
// question names, time for "when" questions. Each test also turns the
// mechanism off to show the result is its doing.

const memory = storeEachTest('memory-recall-');

const conversation = [
  '[1 May, 2023] Ben: The weather has been great here.',
  '[1 May, 2023] Ben: Work keeps me busy.',
  '[2 May, 2023] Ana: I finally finished the pottery class, it was so relaxing.',
  '[2 May, 2023] Ana: How are your pets doing these days?',
  '[2 May, 2023] Ben: Great! We adopted another cat named Bailey.',
  '[2 May, 2023] Ana: Lovely. My sister visits next week.',
  '[2 May, 2023] Ben: I went to the museum with my kids.',
  '[2 May, 2023] Ana: I went to the museum with my kids too, last Sunday.',
  '[9 May, 2023] Ana: I like cats, but Ben has more pets than anyone.',
];

async function search(query: string, settings: MemoryStoreSettings = {}): Promise<string[]> {
  memory.store.applyConfig(settings);
  const { results } = await memory.store.search({ query, limit: 3 });
  return results.map((result) => result.content);
}

describe('full-text recall beyond bm25', () => {
  it('finds an answer through the turn it answers', async () => {
    for (const content of conversation) await memory.store.store({ content });
    // Every turn of Ben's matches the name; the answer is the one after the question about pets.
    const bens = (found: string[]) => found.filter((content) => content.includes('] Ben:'));
    expect(bens(await search('What pets does Ben have?'))[0]).toBe(conversation[4]);
    expect(bens(await search('What pets does Ben have?', { recall: { neighbourWeight: 0 } }))[0]).not.toBe(
      conversation[4],
    );
  });

  it('ranks the turn of the speaker a question names first', async () => {
    await memory.store.storeMany(conversation.map((content) => ({ content })));
    expect((await search('Where did Ben go with his kids?'))[0]).toBe(conversation[6]);
    expect((await search('Where did Ana go with her kids?'))[0]).toBe(conversation[7]);
  });

  it('of two speakers named, ranks first the one asked about, not the one talked to or about', async () => {
    await memory.store.storeMany(conversation.map((content) => ({ content })));
    expect((await search('Where did Ana say to Ben she went with her kids?'))[0]).toBe(conversation[7]);
    expect((await search('Where did Ana tell Ben she went with her kids?'))[0]).toBe(conversation[7]);
    expect((await search("Where did Ana go with Ben's kids?"))[0]).toBe(conversation[7]);
    expect((await search('According to Ana, where did Ben go with the kids?'))[0]).toBe(conversation[7]);
    expect((await search('Where did Ben say to Ana he went with his kids?'))[0]).toBe(conversation[6]);
  });

  it('prefers, for a question asking when, the turn that says when', async () => {
    await memory.store.storeMany(
      [
        '[2 May, 2023] Ben: I went to the museum with my kids.',
        '[2 May, 2023] Ben: I went to the museum with my kids last Sunday.',
      ].map((content) => ({ content })),
    );
    expect((await search('When did Ben go to the museum?'))[0]).toMatch(/last Sunday/);
    expect((await search('When did Ben go to the museum?', { recall: { timeWeight: 0 } }))[0]).not.toMatch(
      /last Sunday/,
    );
  });

  it('finds a turn by the absolute date its relative expression names', async () => {
    await memory.store.storeMany(
      [
        '[8 May, 2023] Ana: I painted a lake sunrise last year.',
        '[8 May, 2023] Ana: I painted a lake.',
        '[2 May, 2023] Ben: Two weeks ago we drove to the coast.',
        '[2 May, 2023] Ben: We drove to the coast.',
      ].map((content) => ({ content })),
    );
    // "last year" in a turn of May 2023 is 2022; "two weeks ago" on 2 May is 18 April.
    expect((await search('What did Ana paint in 2022?'))[0]).toMatch(/last year/);
    expect((await search('Where did Ben drive in April 2023?'))[0]).toMatch(/Two weeks ago/);
  });

  it('lends nothing between unrelated notes stored back to back, but does within a session', async () => {
    await memory.store.storeMany([
      { content: 'The boiler was serviced by Vaillant' },
      { content: 'Keep the receipt in the blue folder' },
    ]);
    const alone = await memory.store.search({ query: 'boiler service' });
    expect(alone.recall.ftsCandidates).toBe(1);
    await memory.store.storeMany([
      { content: 'Which plumber fixed the heating?', sessionKey: 'chat-1' },
      { content: 'It was Dave, on Tuesday', sessionKey: 'chat-1' },
    ]);
    const inSession = await search('plumber heating');
    expect(inSession).toContain('It was Dave, on Tuesday');
  });

  it('leaves function words out of the match', async () => {
    await memory.store.storeMany([
      { content: 'What did you do with it?' },
      { content: 'The kayak is stored in the garage' },
    ]);
    const { results, recall } = await memory.store.search({ query: 'Where is the kayak?' });
    expect(results.map((result) => result.content)).toEqual(['The kayak is stored in the garage']);
    expect(recall.ftsCandidates).toBe(1);
  });

  it('expands the question with the words its best matches share, when asked to', async () => {
    await memory.store.storeMany([
      { content: 'We adopted a puppy and named him Rex' },
      { content: 'Rex loves chasing gulls on the beach' },
      { content: 'The weather was lovely on the beach' },
    ]);
    expect(await search('What is the name of the puppy?', { recall: { expansionWeight: 0 } })).not.toContain(
      'Rex loves chasing gulls on the beach',
    );
    expect(await search('What is the name of the puppy?', { recall: { expansionWeight: 0.5 } })).toContain(
      'Rex loves chasing gulls on the beach',
    );
  });
});
