import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { words } from './text.js';

// For tests and the recall benchmark only (not exported by the package): an
// OpenAI-compatible embeddings server on 127.0.0.1 whose vectors come from a
// small deterministic model of meaning, so the semantic path (HTTP client,
// cache, index, fusion) runs for real without model weights. The model maps
// each word to a concept (a crude stem, or a group of words that mean the same
// thing) and hashes concepts into a unit vector: "car" and "automobile" meet,
// which the lexical embedder cannot do.

const CONCEPTS: string[][] = [
  ['car', 'automobile', 'vehicle', 'drive', 'kia', 'volvo'],
  ['boss', 'manager', 'supervisor'],
  ['bike', 'bicycle', 'cycling'],
  ['novel', 'book', 'reading', 'read'],
  ['kid', 'child', 'children', 'son', 'daughter'],
  ['operation', 'surgery'],
  ['mother', 'mum', 'mom'],
  ['born', 'birthday'],
  ['dental', 'dentist', 'tooth', 'teeth'],
  ['instrument', 'piano', 'guitar', 'violin', 'music', 'song', 'tune'],
  ['computer', 'laptop', 'thinkpad'],
  ['operating', 'fedora', 'linux', 'windows'],
  ['vegetable', 'tomato', 'basil', 'courgette'],
  ['nut', 'peanut', 'almond'],
  ['holiday', 'vacation', 'trip', 'cabin'],
  ['wedding', 'married', 'marriage'],
  ['job', 'work', 'career', 'employ'],
  ['dessert', 'sugar', 'sweet', 'cake'],
  ['vaccinate', 'vaccine', 'booster', 'shot'],
  ['wifi', 'network', 'router'],
  ['pet', 'cat', 'dog', 'puppy', 'kitten'],
  ['meat', 'vegetarian', 'vegan'],
  ['house', 'home', 'flat', 'apartment'],
  ['paint', 'painting', 'art', 'drawing', 'draw'],
];

const conceptOf = new Map<string, string>();
for (const group of CONCEPTS) for (const word of group) conceptOf.set(word, group[0]!);

/** A crude English stem: enough for "running"/"runs"/"run" to meet. */
function stem(word: string): string {
  return word.replace(/(ing|ed|es|s|ly)$/, '').replace(/(.)\1$/, '$1') || word;
}

function concept(word: string): string {
  return conceptOf.get(word) ?? conceptOf.get(stem(word)) ?? stem(word);
}

function hash32(text: string, seed: number): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The deterministic concept model: one unit vector per text. */
export function conceptVector(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const counts = new Map<string, number>();
  for (const word of words(text)) {
    if (word.length < 3) continue;
    const key = concept(word);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  // Each concept lands in two signed buckets, so a collision of one costs little.
  for (const [key, count] of counts) {
    for (const seed of [1, 2]) {
      const hash = hash32(key, seed);
      vector[hash % dimensions]! += (hash & 0x80000000 ? -1 : 1) * (1 + Math.log(count));
    }
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0)) || 1;
  return vector.map((value) => value / norm);
}

/** A running fake embeddings endpoint: its `/v1` base URL, and how to stop it. */
export interface FakeEmbeddingsServer {
  baseUrl: string;
  requests: number;
  close(): Promise<void>;
}

/** Serves `POST /v1/embeddings` with {@link conceptVector} on 127.0.0.1, port 0. */
export async function startFakeEmbeddingsServer(dimensions = 256): Promise<FakeEmbeddingsServer> {
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      state.requests++;
      const { input, model } = JSON.parse(body) as { input: string[]; model: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          object: 'list',
          model,
          data: input.map((text, index) => ({
            object: 'embedding',
            index,
            embedding: conceptVector(text, dimensions),
          })),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
