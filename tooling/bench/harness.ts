import { Agent, request } from 'node:http';

/**
 * The benchmark harness: every benchmark measures the project and its baseline in the
 * same run, on the same machine, and prints the ratio next to the raw figures. Nothing
 * here asserts a time: figures are for reading, not for failing a build.
 */

/** One measured subject. */
export interface Measurement {
  name: string;
  /** Operations completed. */
  ops: number;
  /** Wall time in milliseconds. */
  ms: number;
  /** Operations per second. */
  opsPerSec: number;
}

/** Options of {@link measureThroughput}. */
export interface ThroughputOptions {
  /** Warm-up time before measuring. @default 1000 */
  warmupMs?: number;
  /** Measured time. @default 3000 */
  durationMs?: number;
}

/**
 * Runs `runFor(ms)` (which must return how many operations it completed in about that
 * long) once to warm up and once measured.
 */
export async function measureThroughput(
  name: string,
  runFor: (ms: number) => Promise<number>,
  options: ThroughputOptions = {},
): Promise<Measurement> {
  await runFor(options.warmupMs ?? 1000);
  const started = performance.now();
  const ops = await runFor(options.durationMs ?? 3000);
  const ms = performance.now() - started;
  return { name, ops, ms, opsPerSec: (ops * 1000) / ms };
}

/** Alternates subjects in rounds so drift on a shared machine hits all of them alike. */
export async function interleave(
  subjects: Array<{ name: string; runFor: (ms: number) => Promise<number> }>,
  options: ThroughputOptions & { rounds?: number } = {},
): Promise<Measurement[]> {
  const rounds = options.rounds ?? 3;
  const totals = new Map<string, { ops: number; ms: number }>();
  for (const subject of subjects) await subject.runFor(options.warmupMs ?? 1000);
  for (let round = 0; round < rounds; round++) {
    for (const subject of subjects) {
      const started = performance.now();
      const ops = await subject.runFor(options.durationMs ?? 2000);
      const ms = performance.now() - started;
      const total = totals.get(subject.name) ?? { ops: 0, ms: 0 };
      totals.set(subject.name, { ops: total.ops + ops, ms: total.ms + ms });
    }
  }
  return subjects.map(({ name }) => {
    const { ops, ms } = totals.get(name) ?? { ops: 0, ms: 1 };
    return { name, ops, ms, opsPerSec: (ops * 1000) / ms };
  });
}

/** Prints a table of subjects with their ratio to the baseline (the first row unless named). */
export function printComparison(title: string, rows: Measurement[], baselineName?: string): void {
  const baseline = rows.find((row) => row.name === baselineName) ?? rows[0];
  console.log(`\n${title}`);
  for (const row of rows) {
    const ratio = baseline ? row.opsPerSec / baseline.opsPerSec : 1;
    console.log(
      `  ${row.name.padEnd(44)} ${row.opsPerSec.toFixed(0).padStart(9)} ops/s  ` +
        `(${row.ops} ops in ${row.ms.toFixed(0)} ms)  ratio ${ratio.toFixed(2)}`,
    );
  }
}

/** Prints one figure against an aim, e.g. RSS against a budget. */
export function printFigure(
  label: string,
  value: number,
  unit: string,
  aim?: { below?: number; above?: number },
) {
  let verdict = '';
  if (aim?.below !== undefined)
    verdict =
      value < aim.below ? ` (aim < ${aim.below} ${unit}: met)` : ` (aim < ${aim.below} ${unit}: missed)`;
  if (aim?.above !== undefined)
    verdict = value > aim.above ? ` (aim > ${aim.above}: met)` : ` (aim > ${aim.above}: missed)`;
  console.log(`  ${label.padEnd(44)} ${value.toFixed(1).padStart(9)} ${unit}${verdict}`);
}

/** Options of {@link httpPostLoad}. */
export interface HttpPostLoadOptions {
  port: number;
  path: string;
  /** The request body, sent as is on every request. */
  body: string;
  /** Headers besides `content-length` (which is set from the body). */
  headers: Record<string, string>;
  /** Keep-alive connections, each sending one request after another. */
  connections: number;
}

/**
 * A `runFor(ms)` that POSTs the same body to 127.0.0.1 over `connections` keep-alive
 * connections for about `ms` and answers how many requests completed; any status but
 * 200 fails the run.
 */
export function httpPostLoad(options: HttpPostLoadOptions): (ms: number) => Promise<number> {
  const { port, path, body, connections } = options;
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const headers = { ...options.headers, 'content-length': Buffer.byteLength(body) };
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  return async (ms: number) => {
    const until = performance.now() + ms;
    let done = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (performance.now() < until) {
          await once();
          done++;
        }
      }),
    );
    return done;
  };
}
