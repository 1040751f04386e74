/** `delay-seconds` (RFC 9110 §10.2.3); a fraction is tolerated, some services send one. */
const SECONDS = /^\d+(?:\.\d+)?$/;
/**
 * The three HTTP-date forms (RFC 9110 §5.6.7): IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`,
 * obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`.
 * Checked before `Date.parse`, which also accepts text no server means as a date (`"5 apples"`).
 */
const HTTP_DATE = [
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{2}-(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];

/**
 * A `Retry-After` header value as a wait in ms from `now`: `delay-seconds` (`"120"`) or an
 * HTTP-date (a date already past is a wait of 0). `undefined` when the header is absent or is
 * neither form, so the caller falls back to its own backoff.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (SECONDS.test(text)) return Math.round(Number(text) * 1000);
  if (!HTTP_DATE.some((form) => form.test(text))) return undefined;
  // asctime has no zone: it is GMT by definition, which Date.parse would not assume.
  const at = Date.parse(text.endsWith('GMT') ? text : `${text} GMT`);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
