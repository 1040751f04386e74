import { describe, expect, it } from 'vitest';
import { backfillFusion } from './fusion.js';
import {
  asksWhen,
  mentionsTime,
  namesSpeaker,
  speakersAsked,
  topicWords,
  transcriptLine,
} from './lexical.js';

describe('question analysis', () => {
  it('keeps topic words, splitting possessives and dropping function words', () => {
    expect(topicWords("What is Gina's favorite style of dance?")).toEqual([
      'gina',
      'favorite',
      'style',
      'dance',
    ]);
    expect(topicWords("Why didn't Jon's studio open?")).toEqual(['jon', 'studio', 'open']);
    // A question of function words only keeps them all rather than matching nothing.
    expect(topicWords('Who is it?')).toEqual(['who', 'is', 'it']);
  });

  it('tells questions asking when, and texts anchored in time', () => {
    expect(asksWhen('When did Melanie paint a sunrise?')).toBe(true);
    expect(asksWhen('In what year did they meet?')).toBe(true);
    expect(asksWhen('What did Melanie paint?')).toBe(false);
    expect(mentionsTime('We went camping last weekend')).toBe(true);
    expect(mentionsTime('I painted it in 2022')).toBe(true);
    expect(mentionsTime('I love painting sunsets')).toBe(false);
  });
});

describe('transcript lines', () => {
  it('splits the date and speaker header from the text', () => {
    expect(transcriptLine('[1:56 pm on 8 May, 2023] Caroline: I went to a support group.')).toEqual({
      date: '1:56 pm on 8 May, 2023',
      speaker: 'caroline',
      text: 'I went to a support group.',
    });
    expect(transcriptLine('Mary Ann: see you')).toEqual({
      date: undefined,
      speaker: 'mary ann',
      text: 'see you',
    });
    expect(
      transcriptLine('The deployment runs on Kubernetes in eu-west-1: all of it').speaker,
    ).toBeUndefined();
    expect(transcriptLine('The wifi password is on the fridge')).toEqual({
      date: undefined,
      speaker: undefined,
      text: 'The wifi password is on the fridge',
    });
  });

  it('knows when a question names the speaker', () => {
    expect(namesSpeaker(new Set(['what', 'did', 'ann', 'say']), 'mary ann')).toBe(true);
    expect(namesSpeaker(new Set(['what', 'did', 'jon', 'say']), 'mary ann')).toBe(false);
    expect(namesSpeaker(new Set(['jon']), undefined)).toBe(false);
  });

  it('of several speakers named, keeps those asked about as speaking', () => {
    const speakers = ['caroline', 'melanie', 'mary ann'];
    const asked = (question: string) => [...speakersAsked(question, speakers)].sort();
    expect(asked("What does Melanie think about Caroline's decision?")).toEqual(['melanie']);
    expect(asked('What book did Caroline recommend to Melanie?')).toEqual(['caroline']);
    expect(asked('According to Melanie, what is Caroline good at?')).toEqual(['melanie']);
    // Of several left, the first named is the subject, unless they are asked about together.
    expect(asked('What does Caroline tell Melanie?')).toEqual(['caroline']);
    expect(asked('How does Melanie describe the bowl that Caroline made?')).toEqual(['melanie']);
    expect(asked('Did Caroline and Melanie go camping?')).toEqual(['caroline', 'melanie']);
    expect(asked('What do Melanie, Caroline both like?')).toEqual(['caroline', 'melanie']);
    // Only side roles: every named speaker stays.
    expect(asked("Is Caroline's art like Melanie's?")).toEqual(['caroline', 'melanie']);
    // One name alone is asked about whatever its role; a name that is no speaker is not.
    expect(asked("What is Caroline's identity?")).toEqual(['caroline']);
    expect(asked('What did Ann say to Jon?')).toEqual(['mary ann']);
    expect(asked('What did Jon say?')).toEqual([]);
  });
});

describe('backfill fusion', () => {
  it('keeps the first lane in its order and ranks the other lane after it', () => {
    const fused = backfillFusion([
      [
        { seq: 1, relevance: 9 },
        { seq: 2, relevance: 3 },
      ],
      [
        { seq: 3, relevance: 0.9 },
        { seq: 2, relevance: 0.8 },
        { seq: 4, relevance: 0.1 },
      ],
    ]);
    const order = [...fused.entries()].sort((a, b) => b[1] - a[1]).map(([seq]) => seq);
    expect(order).toEqual([1, 2, 3, 4]);
  });
});
