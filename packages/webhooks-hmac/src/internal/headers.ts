/** Request headers as node:http gives them (lowercase keys) or as a Web `Headers` object. */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** The value of header `name` (lowercase), the first one when it was sent several times. */
export function readHeader(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    // A Web Headers object joins repeated values with ", "; the first one is what a sender meant.
    const joined = (headers as Headers).get(name);
    return joined === null ? undefined : (joined.split(',', 1)[0] ?? '').trim();
  }
  const value = (headers as Record<string, string | readonly string[] | undefined>)[name];
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return value[0];
}

/** A plain lowercase-keyed string map of the headers, for templates (repeated values joined by ", "). */
export function headerMap(headers: HeaderSource): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    (headers as Headers).forEach((value, key) => {
      out[key.toLowerCase()] = value;
    });
    return out;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const value = record[key];
    if (value === undefined) continue;
    out[key.toLowerCase()] = typeof value === 'string' ? value : value.join(', ');
  }
  return out;
}
