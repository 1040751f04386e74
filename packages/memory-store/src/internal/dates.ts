// Dates in conversation turns and questions. A turn stored as `[<date>] Speaker: text` says
// when it was said; what it tells of ("yesterday", "last Saturday", "two weeks ago", "last
// year") is resolved against that date into absolute days, months and years. At write time
// those are added to the words the full-text index holds, so a question naming the date
// ("in May 2023", "in 2022") finds the turn.

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const MONTH = `(${MONTHS.join('|')}|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\\.?`;
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  couple: 2,
  few: 3,
  several: 3,
};

/** A calendar day, month or year: month 0-11, day 1-31; the coarser parts left out. */
export interface CalendarDate {
  year: number;
  month?: number | undefined;
  day?: number | undefined;
}

function monthOf(name: string): number {
  const short = name.toLowerCase().replace('.', '').slice(0, 3);
  return MONTHS.findIndex((month) => month.startsWith(short));
}

function day(date: Date): CalendarDate {
  return { year: date.getUTCFullYear(), month: date.getUTCMonth(), day: date.getUTCDate() };
}

function valid(year: number, month: number, dayOfMonth: number): Date | undefined {
  const date = new Date(Date.UTC(year, month, dayOfMonth));
  return date.getUTCMonth() === month && year >= 1000 && year <= 9999 ? date : undefined;
}

const FULL_DMY = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH},?\\s+(\\d{4})\\b`, 'i');
const FULL_MDY = new RegExp(`\\b${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'i');
const ISO = /\b(\d{4})-(\d{2})-(\d{2})\b/;

/** The first full date (`8 May, 2023`, `May 8, 2023`, `2023-05-08`) in `text`. */
export function parseDay(text: string): Date | undefined {
  let match = FULL_DMY.exec(text);
  if (match !== null) return valid(Number(match[3]), monthOf(match[2]!), Number(match[1]));
  match = FULL_MDY.exec(text);
  if (match !== null) return valid(Number(match[3]), monthOf(match[1]!), Number(match[2]));
  match = ISO.exec(text);
  if (match !== null) return valid(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return undefined;
}

const RELATIVE = new RegExp(
  [
    '\\b(yesterday|today|tonight|tomorrow|last night)\\b',
    `\\b(last|this past|past) (weekend|${WEEKDAYS.join('|')}|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun|week|month|year)\\b`,
    '\\b(next|this|coming) (weekend|week|month|year)\\b',
    '\\b(a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple|few|several|\\d{1,2})(?: of)? (day|week|month|year)s? ago\\b',
  ].join('|'),
  'gi',
);

function shiftDays(anchor: Date, days: number): Date {
  return new Date(anchor.getTime() + days * 86_400_000);
}

function shiftMonths(anchor: Date, months: number): CalendarDate {
  const total = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + months;
  return { year: Math.floor(total / 12), month: total % 12 };
}

/** What a relative expression (already lower-cased, one of RELATIVE's) means on `anchor`. */
function resolve(expression: string, anchor: Date): CalendarDate[] {
  const words = expression.split(' ');
  if (expression === 'yesterday' || expression === 'last night') return [day(shiftDays(anchor, -1))];
  if (expression === 'today' || expression === 'tonight') return [day(anchor)];
  if (expression === 'tomorrow') return [day(shiftDays(anchor, 1))];
  const unit = words[words.length - 1]!;
  if (unit === 'ago') {
    const count = NUMBERS[words[0]!] ?? Number(words[0]);
    const span = words[words.length - 2]!.replace(/s$/, '');
    if (span === 'day') return [day(shiftDays(anchor, -count))];
    if (span === 'week') return [day(shiftDays(anchor, -7 * count))];
    if (span === 'month') return [shiftMonths(anchor, -count)];
    return [{ year: anchor.getUTCFullYear() - count }];
  }
  const direction = words[0] === 'next' || words[0] === 'coming' ? 1 : words[0] === 'this' ? 0 : -1;
  if (unit === 'weekend') {
    // The Saturday and Sunday before (or after) the anchor.
    const saturday =
      direction > 0
        ? shiftDays(anchor, (6 - anchor.getUTCDay() + 7) % 7 || 7)
        : shiftDays(anchor, -((anchor.getUTCDay() + 1) % 7 || 7));
    return [day(saturday), day(shiftDays(saturday, 1))];
  }
  if (unit === 'week') return [day(shiftDays(anchor, 7 * direction))];
  if (unit === 'month') return [shiftMonths(anchor, direction)];
  if (unit === 'year') return [{ year: anchor.getUTCFullYear() + direction }];
  // A weekday, written out or short ("fri"): the latest such day before the anchor.
  const weekday = WEEKDAYS.findIndex((name) => name.startsWith(unit.slice(0, 3)));
  const back = (anchor.getUTCDay() - weekday + 7) % 7 || 7;
  return [day(shiftDays(anchor, -back))];
}

/** The dates the relative expressions of `text` name, resolved against `anchor`. */
export function resolveRelative(text: string, anchor: Date): CalendarDate[] {
  const out: CalendarDate[] = [];
  for (const match of text.matchAll(RELATIVE)) out.push(...resolve(match[0].toLowerCase(), anchor));
  return out;
}

/** A date as the words the full-text index holds: `7 may 2023`, `may 2023`, `2023`. */
export function dateWords(date: CalendarDate): string {
  const parts: Array<string | number> = [];
  if (date.day !== undefined) parts.push(date.day);
  if (date.month !== undefined) parts.push(MONTHS[date.month]!);
  parts.push(date.year);
  return parts.join(' ');
}

/**
 * When an entry was said: the date of its transcript header (`[8 May, 2023] ...`, `header`
 * being the bracketed part), else the time it was stored.
 */
export function anchorOf(header: string | undefined, createdAt: number): Date {
  const said = header === undefined ? undefined : parseDay(header);
  return said ?? new Date(createdAt);
}
