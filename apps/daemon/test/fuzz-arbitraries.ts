import fc from 'fast-check';

/**
 * The seed and the runs per case of the fuzz suites: fixed for CI; `FUZZ_SEED=random` (or a
 * number) and `FUZZ_RUNS` for longer runs.
 */
export const fuzzSeed =
  process.env.FUZZ_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED ?? 42);
export const fuzzRuns = Number(process.env.FUZZ_RUNS ?? 15);

/** The part of JSON Schema that `rpc.discover` writes for params (zod's JSON Schema output). */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  nullable?: boolean;
}

/** One method as `rpc.discover` lists it (OpenRPC). */
export interface DiscoveredMethod {
  name: string;
  params: Array<{ name: string; required?: boolean; schema: JsonSchema }>;
  'x-params-schema'?: JsonSchema;
}

/** Names of `Object.prototype` members: as keys and ids they must find nothing and break nothing. */
export const BUILT_IN_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
];

/** Characters that break naive text handling: lone surrogates, bidi controls, NUL, BOM, emoji, combining marks. */
const ODD_PIECES = [
  '\ud800',
  '\udfff',
  '\u202e',
  '\u200f',
  '\u2066',
  '\u0000',
  '\ufeff',
  '😀',
  '👩‍👩‍👧',
  'e\u0301',
  '\uffff',
  '\n',
];

/** Strings that match none, some or all of the patterns the daemon uses, tried when a pattern cannot be generated. */
const PATTERN_SAMPLES = [
  'default:rpc:admin',
  '*/5 * * * *',
  'UTC',
  'Europe/Berlin',
  '2030-01-01T00:00:00Z',
  'a',
  'abc',
  'default',
  'x-1',
  'a.b',
  'A1_b-2',
  '0000',
  'deadbeef',
  '2026-01-01T00:00:00Z',
];

const MAX_STRING = 24;
const MAX_ARRAY = 4;

/** The params of a method as one object schema: `x-params-schema` when given, else its named params. */
export function paramsSchemaOf(method: DiscoveredMethod): JsonSchema {
  if (method['x-params-schema']) return method['x-params-schema'];
  return {
    type: 'object',
    properties: Object.fromEntries(method.params.map((param) => [param.name, param.schema])),
    required: method.params.filter((param) => param.required).map((param) => param.name),
    additionalProperties: false,
  };
}

/** Values that satisfy `schema` most of the time (patterns and bounds are honoured where cheap). */
export function arbitraryOf(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const base = baseArbitrary(schema, depth);
  return schema.nullable ? fc.oneof(fc.constant(null), base) : base;
}

function baseArbitrary(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives && alternatives.length > 0) {
    return fc.oneof(...alternatives.map((alternative) => arbitraryOf(alternative, depth + 1)));
  }
  if (Array.isArray(schema.type)) {
    return fc.oneof(...schema.type.map((type) => arbitraryOf({ ...schema, type }, depth)));
  }
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'string':
      return stringOf(schema);
    case 'integer':
      return integerOf(schema);
    case 'number':
      return fc.double({
        min: schema.exclusiveMinimum ?? schema.minimum ?? -1e9,
        max: schema.exclusiveMaximum ?? schema.maximum ?? 1e9,
        minExcluded: schema.exclusiveMinimum !== undefined,
        maxExcluded: schema.exclusiveMaximum !== undefined,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'array':
      return fc.array(schema.items ? arbitraryOf(schema.items, depth + 1) : anyJson(), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? MAX_ARRAY, MAX_ARRAY)),
      });
    case 'object':
      return objectOf(schema, depth);
    default:
      return anyJson();
  }
}

function anyJson(): fc.Arbitrary<unknown> {
  return fc.jsonValue({ maxDepth: 2 });
}

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? MAX_STRING, MAX_STRING));
  if (schema.pattern === undefined) {
    return fc.oneof(
      fc.string({ minLength, maxLength }),
      fc.string({ minLength, maxLength, unit: 'grapheme' }),
      fc.constantFrom(...PATTERN_SAMPLES, ...BUILT_IN_NAMES).filter((text) => text.length >= minLength),
    );
  }
  const pattern = new RegExp(schema.pattern, 'u');
  const fits = (text: string) => text.length >= minLength && text.length <= (schema.maxLength ?? Infinity);
  // Known names ('default', the built-ins) reach past "not found" into the handlers.
  const samples = [...PATTERN_SAMPLES, ...BUILT_IN_NAMES].filter((text) => pattern.test(text) && fits(text));
  let matching: fc.Arbitrary<string>;
  try {
    // fast-check reads the pattern without the `u` flag; `\p{…}` and the like make it throw.
    matching = fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((text) => pattern.test(text) && fits(text));
  } catch {
    matching = fc.string({ minLength, maxLength });
  }
  return samples.length > 0 ? fc.oneof(matching, fc.constantFrom(...samples)) : matching;
}

function integerOf(schema: JsonSchema): fc.Arbitrary<number> {
  const min = Math.max(
    schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : (schema.minimum ?? -1e6),
    Number.MIN_SAFE_INTEGER,
  );
  const max = Math.min(
    schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : (schema.maximum ?? 1e6),
    Number.MAX_SAFE_INTEGER,
  );
  return fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number);
}

function objectOf(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const names = Object.keys(properties);
  const extra = schema.additionalProperties;
  if (depth > 4) return fc.constant({});
  const known = fc.record(
    Object.fromEntries(names.map((name) => [name, arbitraryOf(properties[name] ?? {}, depth + 1)])),
    { requiredKeys: (schema.required ?? []).filter((name) => names.includes(name)) },
  );
  if (extra === false || (names.length > 0 && extra === undefined)) return known;
  const values = typeof extra === 'object' ? arbitraryOf(extra, depth + 1) : anyJson();
  return fc
    .tuple(known, fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), values, { maxKeys: 3 }))
    .map(([own, more]) => ({ ...more, ...own }));
}

/** A JSON text for an object with `entries`, written by hand so any key (an own `__proto__`) and any value text fit. */
export function objectText(entries: Array<[key: string, valueText: string]>): string {
  return `{${entries.map(([key, valueText]) => `${JSON.stringify(key)}:${valueText}`).join(',')}}`;
}

/** `params` as text with `key` set to the raw `valueText` (added when absent). */
function withRawValue(params: Record<string, unknown>, key: string, valueText: string): string {
  const entries = Object.entries(params)
    .filter(([name]) => name !== key)
    .map(([name, value]): [string, string] => [name, JSON.stringify(value)]);
  return objectText([...entries, [key, valueText]]);
}

/** Text nested `depth` levels deep, objects and arrays alternating. */
export function nestedText(depth: number): string {
  let open = '';
  let close = '';
  for (let level = 0; level < depth; level++) {
    if (level % 2 === 0) {
      open += '{"a":';
      close = `}${close}`;
    } else {
      open += '[';
      close = `]${close}`;
    }
  }
  return `${open}1${close}`;
}

/** A value of some JSON type, mostly not the one a schema wants. */
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.string({ maxLength: 8 }),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
  fc.constant(''),
  fc.constant(-1),
  fc.constant(1e308),
);

/** Short strings of the odd pieces above and plain characters. */
export const oddString: fc.Arbitrary<string> = fc
  .array(fc.oneof(fc.constantFrom(...ODD_PIECES), fc.string({ maxLength: 3 })), {
    minLength: 1,
    maxLength: 12,
  })
  .map((pieces) => pieces.join(''));

/** A label and a params text that breaks the schema (or probes it with hostile but well-typed values). */
export interface Mutation {
  kind: string;
  paramsText: string;
}

type Mutate = (params: Record<string, unknown>) => Mutation;

/**
 * Params texts made from valid-ish params by one mutation: a wrong type, an extra or built-in
 * key (an own `__proto__` too), a built-in name as a value, deep nesting, a huge string, odd
 * unicode, a missing required key, a repeated key, or params that are no object at all.
 */
export function mutatedParams(
  schema: JsonSchema,
  valid: fc.Arbitrary<Record<string, unknown>>,
): fc.Arbitrary<Mutation> {
  const names = Object.keys(schema.properties ?? {});
  const required = (schema.required ?? []).filter((name) => names.includes(name));
  const target = names.length > 0 ? fc.constantFrom(...names) : fc.constantFrom('x', ...BUILT_IN_NAMES);
  const stringNames = names.filter((name) => schema.properties?.[name]?.type === 'string');
  const stringTarget = stringNames.length > 0 ? fc.constantFrom(...stringNames) : target;
  const mutations: Array<fc.Arbitrary<Mutate>> = [
    fc.tuple(target, wrongValue).map(([key, value]) => (params) => ({
      kind: `wrong type at ${key}`,
      paramsText: withRawValue(params, key, JSON.stringify(value)),
    })),
    fc
      .tuple(
        fc.oneof(fc.constantFrom(...BUILT_IN_NAMES), fc.string({ maxLength: 6 })),
        fc.oneof(wrongValue, oddString),
      )
      .map(([key, value]) => (params) => ({
        kind: `extra key ${JSON.stringify(key)}`,
        paramsText: withRawValue(params, key, JSON.stringify(value)),
      })),
    fc.tuple(stringTarget, fc.constantFrom(...BUILT_IN_NAMES)).map(([key, name]) => (params) => ({
      kind: `built-in name ${name} at ${key}`,
      paramsText: withRawValue(params, key, JSON.stringify(name)),
    })),
    fc
      .tuple(fc.oneof(target, fc.constant('__proto__')), fc.constantFrom(65, 200, 10_000))
      .map(([key, depth]) => (params) => ({
        kind: `nested ${depth} deep at ${key}`,
        paramsText: withRawValue(params, key, nestedText(depth)),
      })),
    fc
      .tuple(stringTarget, fc.constantFrom(1, 70_000, 300_000), oddString)
      .map(([key, size, odd]) => (params) => {
        const piece = odd || 'x';
        const bound = schema.properties?.[key]?.maxLength;
        const length = size === 1 && bound !== undefined ? bound + 1 : Math.max(size, 2);
        return {
          kind: `string of ${length} at ${key}`,
          paramsText: withRawValue(
            params,
            key,
            JSON.stringify(piece.repeat(Math.ceil(length / piece.length)).slice(0, length)),
          ),
        };
      }),
    fc.tuple(stringTarget, oddString).map(([key, text]) => (params) => ({
      kind: `odd unicode at ${key}`,
      paramsText: withRawValue(params, key, JSON.stringify(text)),
    })),
    fc.constantFrom('[]', '[1,"a"]', '"x"', '1', 'null', 'true').map((text) => () => ({
      kind: `params ${text}`,
      paramsText: text,
    })),
    fc.tuple(target, wrongValue).map(([key, value]) => (params) => ({
      kind: `repeated key ${key}`,
      paramsText: `${withRawValue(params, key, JSON.stringify(value)).slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(Object.hasOwn(params, key) ? params[key] : null)}}`,
    })),
  ];
  mutations.push(
    fc
      .tuple(fc.nat(), fc.oneof(wrongValue, oddString, fc.constantFrom(...BUILT_IN_NAMES)))
      .map(([pick, value]) => (params) => {
        const inner = innerPaths(params);
        const path = inner[pick % Math.max(inner.length, 1)];
        if (!path) return builtInKeyAtTop(params, 'constructor', value);
        return {
          kind: `inner value at ${path.join('.')}`,
          paramsText: JSON.stringify(replaceAt(params, path, value)),
        };
      }),
    fc
      .tuple(fc.nat(), fc.constantFrom(...BUILT_IN_NAMES), wrongValue)
      .map(([pick, key, value]) => (params) => {
        const inner = innerPaths(params).filter((path) => isPlainObject(valueAt(params, path)));
        const path = inner[pick % Math.max(inner.length, 1)];
        if (!path) return builtInKeyAtTop(params, key, value);
        // A placeholder key, renamed in the text: JSON.stringify cannot write an own __proto__.
        const marked = replaceAt(params, path, { ...(valueAt(params, path) as object), [KEY_MARK]: value });
        return {
          kind: `inner key ${key} at ${path.join('.')}`,
          paramsText: JSON.stringify(marked).replace(JSON.stringify(KEY_MARK), JSON.stringify(key)),
        };
      }),
  );
  if (required.length > 0) {
    mutations.push(
      fc.constantFrom(...required).map((key) => (params) => {
        const { [key]: _dropped, ...rest } = params;
        return { kind: `missing ${key}`, paramsText: JSON.stringify(rest) };
      }),
    );
  }
  return fc.tuple(valid, fc.oneof(...mutations)).map(([params, mutate]) => mutate(params));
}

/**
 * The fallback of the inner mutations when params hold nothing nested: a built-in key at the
 * top instead, so the params stay invalid (sent unchanged, `{}` would be a valid config.apply).
 */
function builtInKeyAtTop(params: Record<string, unknown>, key: string, value: unknown): Mutation {
  return { kind: `key ${key}`, paramsText: withRawValue(params, key, JSON.stringify(value) ?? 'null') };
}

const KEY_MARK = '\u0000fuzz-key-mark';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Paths of every value below the top level of `value` (inside objects and arrays of params). */
function innerPaths(
  value: unknown,
  prefix: Array<string | number> = [],
  out: Array<Array<string | number>> = [],
) {
  if (typeof value !== 'object' || value === null) return out;
  for (const [key, child] of Object.entries(value)) {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    if (path.length >= 2) out.push(path);
    innerPaths(child, path, out);
  }
  return out;
}

function valueAt(value: unknown, path: ReadonlyArray<string | number>): unknown {
  let current = value;
  for (const segment of path) current = (current as Record<string | number, unknown>)[segment];
  return current;
}

/** A copy of `value` with the value at `path` replaced. */
function replaceAt(value: unknown, path: ReadonlyArray<string | number>, replacement: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return replacement;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<
    string | number,
    unknown
  >;
  Object.defineProperty(copy, head, {
    value: replaceAt(copy[head], rest, replacement),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
}

/** Request ids, built-in names and odd unicode among them: the answer must carry each back unchanged. */
export const requestId: fc.Arbitrary<string | number> = fc.oneof(
  fc.integer({ min: 1, max: 1e9 }),
  fc.constantFrom(...BUILT_IN_NAMES),
  oddString,
);

/** Method names that are no method: built-ins, near misses, odd unicode. */
const badMethodName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    ...BUILT_IN_NAMES,
    'rpc.__proto__',
    'system.ping.constructor',
    'system.toString',
    'system.__proto__',
    '',
    ' system.ping',
    'SYSTEM.PING',
    'system.ping\u0000',
    'rpc.',
    '.',
  ),
  fc.string({ maxLength: 12 }),
  oddString,
);

/** One request text that breaks the envelope rather than the params. */
const brokenRequest: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(badMethodName, requestId)
    .map(
      ([method, id]) =>
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":${JSON.stringify(method)},"params":{}}`,
    ),
  fc
    .constantFrom('{}', '[]', '1.5', 'true', 'null', '-0', '1e400', '"__proto__"', '{"__proto__":1}')
    .map((id) => `{"jsonrpc":"2.0","id":${id},"method":"system.ping","params":{}}`),
  fc
    .constantFrom(
      '"__proto__":{"polluted":true}',
      '"constructor":{"prototype":{"polluted":true}}',
      '"jsonrpc":"1.0"',
      '"method":1',
      '"method":null',
      '"params":"x"',
      '"result":1',
      '"error":{"code":1}',
    )
    .map((extra) => `{"jsonrpc":"2.0","id":7,"method":"system.ping","params":{},${extra}}`),
  fc.constantFrom(
    '{"jsonrpc":"2.0","method":"system.ping"}',
    '{"method":"system.ping","id":1}',
    '{"jsonrpc":"2.0","id":1}',
  ),
);

/**
 * Body texts that break the JSON-RPC envelope: bad method names and ids, extra or duplicated
 * envelope keys (an own `__proto__`), and batches of them (empty, nested, mixed with numbers).
 */
export const brokenBody: fc.Arbitrary<string> = fc.oneof(
  brokenRequest,
  fc
    .array(fc.oneof(brokenRequest, fc.constantFrom('1', '[]', '{}', 'null')), { maxLength: 5 })
    .map((items) => `[${items.join(',')}]`),
  fc.array(brokenRequest, { minLength: 1, maxLength: 3 }).map((items) => `[[${items.join(',')}]]`),
);
