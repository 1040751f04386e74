import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../test/helpers.js';
import { type Database, openDatabase, StorageError } from './index.js';

let temp: ReturnType<typeof makeTempDir>;
let db: Database;

beforeEach(async () => {
  temp = makeTempDir();
  db = await openDatabase({ dataDir: temp.dir });
  await db.execute('CREATE TABLE evidence (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
});

afterEach(async () => {
  await db.close();
  temp.remove();
});

describe('WriteBatcher', () => {
  it('commits many writes in few transactions and resolves each once committed', async () => {
    const batcher = db.createWriteBatcher({ maxBatch: 100, maxDelayMs: 5 });
    const writes = Array.from({ length: 1000 }, (_, index) =>
      batcher.write('INSERT INTO evidence (id, body) VALUES (?, ?)', [index, `event ${index}`]),
    );
    await Promise.all(writes);
    expect(await db.get('SELECT COUNT(*) AS n FROM evidence')).toEqual({ n: 1000 });
    const stats = batcher.stats;
    expect(stats.statements).toBe(1000);
    expect(stats.failed).toBe(0);
    expect(stats.pending).toBe(0);
    expect(stats.transactions).toBeLessThanOrEqual(20);
  });

  it('waits for company up to maxDelayMs before committing a lone write', async () => {
    const batcher = db.createWriteBatcher({ maxBatch: 50, maxDelayMs: 30 });
    const first = batcher.write({ sql: 'INSERT INTO evidence (body) VALUES (?)', args: ['a'] });
    const second = batcher.write('INSERT INTO evidence (body) VALUES (?)', ['b']);
    expect(batcher.stats.pending).toBe(2);
    await Promise.all([first, second]);
    expect(batcher.stats).toMatchObject({ transactions: 1, statements: 2, pending: 0 });
  });

  it('flush commits whatever is queued without waiting for the delay', async () => {
    const batcher = db.createWriteBatcher({ maxBatch: 1000, maxDelayMs: 60_000 });
    const writes = Array.from({ length: 10 }, (_, index) =>
      batcher.write('INSERT INTO evidence (body) VALUES (?)', [String(index)]),
    );
    await batcher.flush();
    expect(await db.get('SELECT COUNT(*) AS n FROM evidence')).toEqual({ n: 10 });
    await Promise.all(writes);
    await batcher.flush();
  });

  it('rejects only the failing statement and commits the rest of its batch', async () => {
    await db.execute(`INSERT INTO evidence (id, body) VALUES (5, 'already there')`);
    const batcher = db.createWriteBatcher({ maxBatch: 10, maxDelayMs: 1000 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, index) =>
        batcher.write('INSERT INTO evidence (id, body) VALUES (?, ?)', [index, `event ${index}`]),
      ),
    );
    const rejected = outcomes.flatMap((outcome, index) => (outcome.status === 'rejected' ? [index] : []));
    expect(rejected).toEqual([5]);
    const reason = (outcomes[5] as PromiseRejectedResult).reason;
    expect(reason).toBeInstanceOf(StorageError);
    expect((reason as StorageError).code).toBe('CONSTRAINT');
    expect(await db.get('SELECT COUNT(*) AS n FROM evidence')).toEqual({ n: 10 });
    expect(batcher.stats).toMatchObject({ statements: 9, failed: 1 });
  });

  it('is flushed by db.close and refuses writes after close', async () => {
    const batcher = db.createWriteBatcher({ maxBatch: 1000, maxDelayMs: 60_000 });
    const writes = Array.from({ length: 25 }, (_, index) =>
      batcher.write('INSERT INTO evidence (body) VALUES (?)', [String(index)]),
    );
    await db.close();
    await Promise.all(writes);
    expect(batcher.closed).toBe(true);
    await expect(batcher.write('INSERT INTO evidence (body) VALUES (1)')).rejects.toMatchObject({
      code: 'CLOSED',
    });
    db = await openDatabase({ dataDir: temp.dir });
    expect(await db.get('SELECT COUNT(*) AS n FROM evidence')).toEqual({ n: 25 });
  });

  it('still commits writes queued from inside a transaction callback, after it', async () => {
    const batcher = db.createWriteBatcher({ maxBatch: 2, maxDelayMs: 1 });
    let queued: Promise<void>[] = [];
    await db.transaction(async (tx) => {
      await tx.execute(`INSERT INTO evidence (body) VALUES ('in transaction')`);
      queued = [1, 2, 3].map((index) =>
        batcher.write('INSERT INTO evidence (body) VALUES (?)', [`batched ${index}`]),
      );
    });
    await Promise.all(queued);
    expect(await db.get('SELECT COUNT(*) AS n FROM evidence')).toEqual({ n: 4 });
  });

  it('validates its options', () => {
    expect(() => db.createWriteBatcher({ maxBatch: 0 })).toThrow(StorageError);
  });
});
