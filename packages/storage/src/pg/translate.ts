import { StorageError } from '../errors.js';
import type { SqlArgs, SqlValue } from '../types.js';

/** A statement rewritten for PostgreSQL: `$n` placeholders and the names they stand for. */
export interface Translated {
  text: string;
  /** For positional SQL, the count of `?`; for named SQL, the name behind each `$n`. */
  positional: number;
  names: string[];
}

const cache = new Map<string, Translated>();
const CACHE_LIMIT = 512;

function isIdentStart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

function isIdentPart(code: number): boolean {
  return isIdentStart(code) || (code >= 48 && code <= 57);
}

// Skips a quoted region starting at `start` (on the opening quote); returns the index after it.
function skipQuoted(sql: string, start: number, quote: string): number {
  let index = start + 1;
  while (index < sql.length) {
    if (sql[index] === quote) {
      if (sql[index + 1] === quote) {
        index += 2;
        continue;
      }
      return index + 1;
    }
    index += 1;
  }
  return index;
}

/**
 * Rewrites SQLite-style placeholders (`?`, `?NNN`, `:name`, `@name`, `$name`) as PostgreSQL's
 * `$n`, leaving string literals, quoted identifiers, comments, dollar-quoted bodies and `::`
 * casts alone. A name used twice maps to one `$n`. Mixing positional and named placeholders in
 * one statement is refused, as libsql refuses it.
 */
export function translatePlaceholders(sql: string): Translated {
  const cached = cache.get(sql);
  if (cached !== undefined) return cached;
  let out = '';
  let positional = 0;
  const names: string[] = [];
  const byName = new Map<string, number>();
  let last = 0;
  let index = 0;
  const emit = (from: number, replacement: string, to: number) => {
    out += sql.slice(last, from) + replacement;
    last = to;
  };
  while (index < sql.length) {
    const char = sql[index]!;
    const next = sql[index + 1];
    if (char === "'" || char === '"') {
      index = skipQuoted(sql, index, char);
    } else if (char === '-' && next === '-') {
      const end = sql.indexOf('\n', index);
      index = end < 0 ? sql.length : end + 1;
    } else if (char === '/' && next === '*') {
      const end = sql.indexOf('*/', index + 2);
      index = end < 0 ? sql.length : end + 2;
    } else if (char === '$' && (next === '$' || (next !== undefined && isIdentStart(next.charCodeAt(0))))) {
      // `$tag$ … $tag$` is a dollar-quoted string in PostgreSQL; `$name` is a SQLite parameter.
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(index));
      if (tag !== null) {
        const end = sql.indexOf(tag[0], index + tag[0].length);
        index = end < 0 ? sql.length : end + tag[0].length;
      } else {
        index = named(index, index + 1);
      }
    } else if (char === ':' && next === ':') {
      index += 2;
    } else if ((char === ':' || char === '@') && next !== undefined && isIdentStart(next.charCodeAt(0))) {
      index = named(index, index + 1);
    } else if (char === '?') {
      if (names.length > 0) throw mixed(sql);
      let end = index + 1;
      while (end < sql.length && sql.charCodeAt(end) >= 48 && sql.charCodeAt(end) <= 57) end += 1;
      if (end > index + 1) {
        const number = Number(sql.slice(index + 1, end));
        positional = Math.max(positional, number);
        emit(index, `$${number}`, end);
      } else {
        positional += 1;
        emit(index, `$${positional}`, end);
      }
      index = end;
    } else {
      index += 1;
    }
  }
  function named(start: number, nameStart: number): number {
    if (positional > 0) throw mixed(sql);
    let end = nameStart;
    while (end < sql.length && isIdentPart(sql.charCodeAt(end))) end += 1;
    const name = sql.slice(nameStart, end);
    let number = byName.get(name);
    if (number === undefined) {
      names.push(name);
      number = names.length;
      byName.set(name, number);
    }
    emit(start, `$${number}`, end);
    return end;
  }
  const result: Translated = { text: out + sql.slice(last), positional, names };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(sql, result);
  return result;
}

function mixed(sql: string): StorageError {
  return new StorageError(
    'INVALID_ARGUMENT',
    'A statement mixes positional (?) and named (:name) placeholders',
    {
      data: { sql: sql.slice(0, 500) },
    },
  );
}

/** Converts one argument to what `pg` sends: booleans as 1/0 (as libsql stores them), bytes as Buffer. */
export function toPgValue(value: SqlValue | undefined, sql: string, position: string): unknown {
  if (value === undefined) {
    throw new StorageError('INVALID_ARGUMENT', `Argument ${position} is undefined; bind null instead`, {
      data: { sql: sql.slice(0, 500) },
    });
  }
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** Orders the arguments of a statement into the `$n` values of its translation. */
export function bindArguments(translated: Translated, args: SqlArgs, sql: string): unknown[] {
  if (Array.isArray(args)) {
    if (translated.names.length > 0) {
      throw new StorageError('INVALID_ARGUMENT', 'Named placeholders need an object of arguments', {
        data: { sql: sql.slice(0, 500) },
      });
    }
    // Native `$n` SQL (written for PostgreSQL) has nothing to translate and binds as given.
    if (translated.positional === 0)
      return args.map((value, index) => toPgValue(value, sql, String(index + 1)));
    if (args.length !== translated.positional) {
      throw new StorageError(
        'INVALID_ARGUMENT',
        `The statement has ${translated.positional} placeholders but ${args.length} arguments were given`,
        { data: { sql: sql.slice(0, 500) } },
      );
    }
    return args.map((value, index) => toPgValue(value, sql, String(index + 1)));
  }
  return translated.names.map((name) => {
    const value = Object.hasOwn(args, name)
      ? args[name]
      : Object.hasOwn(args, `:${name}`)
        ? args[`:${name}`]
        : undefined;
    return toPgValue(value, sql, `:${name}`);
  });
}
