// Child process of the crash test: stores batches forever and prints each
// committed batch's ids; the parent kills it with SIGKILL mid-way.
import { openDatabase } from '@agentd/storage';
import { createMemoryStore } from '../src/index.js';

const url = process.argv[2]!;
const db = await openDatabase({ url });
const store = await createMemoryStore({ database: db });
for (let batch = 0; ; batch++) {
  const inputs = Array.from({ length: 50 }, (_, index) => ({
    content: `batch ${batch} item ${index} zebra`,
    tags: [`batch-${batch}`],
  }));
  const ids = await store.storeMany(inputs);
  process.stdout.write(`${JSON.stringify(ids.map((entry) => entry.id))}\n`);
}
