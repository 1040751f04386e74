import { describe, expect, it } from 'vitest';
import { anchorOf, dateWords, parseDay, resolveRelative } from './dates.js';

// 8 May 2023 was a Monday.
const monday = new Date(Date.UTC(2023, 4, 8));
const resolved = (text: string) => resolveRelative(text, monday).map(dateWords);

describe('dates in conversation turns', () => {
  it('reads the full dates of transcript headers in their usual spellings', () => {
    for (const text of [
      '1:56 pm on 8 May, 2023',
      'May 8, 2023',
      '8th of May 2023',
      '2023-05-08',
      'on 8 may 2023',
    ])
      expect(parseDay(text)?.toISOString(), text).toBe('2023-05-08T00:00:00.000Z');
    expect(parseDay('31 February, 2023')).toBeUndefined();
    expect(parseDay('some day in May')).toBeUndefined();
  });

  it('resolves relative days, weekdays and weekends against the day a turn was said', () => {
    expect(resolved('I went there yesterday')).toEqual(['7 may 2023']);
    expect(resolved('Tonight is the show, tomorrow I rest')).toEqual(['8 may 2023', '9 may 2023']);
    expect(resolved('Last Saturday we hiked')).toEqual(['6 may 2023']);
    expect(resolved('last Fri I took the kids out')).toEqual(['5 may 2023']);
    expect(resolved('last Monday')).toEqual(['1 may 2023']);
    expect(resolved('this past weekend was busy')).toEqual(['6 may 2023', '7 may 2023']);
    expect(resolved('next weekend')).toEqual(['13 may 2023', '14 may 2023']);
  });

  it('resolves spans ago, last and next weeks, months and years', () => {
    expect(resolved('two weeks ago')).toEqual(['24 april 2023']);
    expect(resolved('a few days ago')).toEqual(['5 may 2023']);
    expect(resolved('3 years ago')).toEqual(['2020']);
    expect(resolved('a couple of months ago')).toEqual(['march 2023']);
    expect(resolved('last week')).toEqual(['1 may 2023']);
    expect(resolved('I painted it last year')).toEqual(['2022']);
    expect(resolved('next month, and next year too')).toEqual(['june 2023', '2024']);
    expect(resolveRelative('last month', new Date(Date.UTC(2023, 0, 20))).map(dateWords)).toEqual([
      'december 2022',
    ]);
    expect(resolved('we had a lovely time, it was a great day')).toEqual([]);
  });

  it('anchors on the header date, else on the time the entry was stored', () => {
    expect(anchorOf('1:56 pm on 8 May, 2023', 0).toISOString()).toBe('2023-05-08T00:00:00.000Z');
    expect(anchorOf(undefined, Date.UTC(2024, 1, 29, 12)).toISOString()).toBe('2024-02-29T12:00:00.000Z');
    expect(anchorOf('not a date', Date.UTC(2024, 1, 29)).toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });
});
