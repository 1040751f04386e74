import { Agent, request } from 'node:http';

/**
 * The benchmark harness: every benchmark measures the project and its baseline in the
 * same run, on the same machine, and prints the ratio next to the raw figures. Aims are
 * written beside the figures in each benchmark (`printFigure(..., { below })`,
 * `printComparison(..., { aims })`); a run with `--check` (`pnpm bench --check`) exits 1
 * naming every aim it missed. Tests never assert times: this is what a developer runs
 * before calling a performance-relevant change done.
 */

/** An aim for a figure: it must stay below and/or above these values. */
export interface Aim {
  below?: number;
  above?: number;
}

const missed: string[] = [];
let aimsChecked = 0;

/** Records `value` against `aim`; answers the verdict text printed beside the figure. */
function judge(label: string, value: number, unit: string, aim: Aim | undefined): string {
  if (aim === undefined || (aim.below === undefined && aim.above === undefined)) return '';
  aimsChecked++;
  const parts: string[] = [];
  let met = true;
  if (aim.below !== undefined) {
    parts.push(`< ${aim.below}${unit ? ` ${unit}` : ''}`);
    met &&= value < aim.below;
  }
  if (aim.above !== undefined) {
    parts.push(`> ${aim.above}${unit ? ` ${unit}` : ''}`);
    met &&= value > aim.above;
  }
  const text = `aim ${parts.join(' and ')}`;
  if (!met) missed.push(`${label}: ${value.toFixed(2)}${unit ? ` ${unit}` : ''} (${text})`);
  return ` (${text}: ${met ? 'met' : 'missed'})`;
}

process.on('exit', () => {
  if (aimsChecked === 0) return;
  console.log(`
aims: ${aimsChecked - missed.length} met, ${missed.length} missed`);
  for (const line of missed) console.log(`  missed: ${line}`);
  if (missed.length > 0 && process.argv.includes('--check')) process.exitCode = 1;
});

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

/** Options of {@link printComparison}. */
export interface ComparisonOptions {
  /** The row the ratios are taken against. @default the first row */
  baseline?: string;
  /** Aims for rows' ratios to the baseline, by row name. */
  aims?: Record<string, Aim>;
  /** Further aims: a row's ratio to another row, e.g. the project against a competing library. */
  versus?: Array<{ row: string; other: string; aim: Aim }>;
}

/**
 * Prints a table of subjects with their ratio to the baseline (the first row unless named),
 * judging the ratios that have aims.
 */
export function printComparison(
  title: string,
  rows: Measurement[],
  options: ComparisonOptions | string = {},
): void {
  const settings = typeof options === 'string' ? { baseline: options } : options;
  const baseline = rows.find((row) => row.name === settings.baseline) ?? rows[0];
  console.log(`\n${title}`);
  for (const row of rows) {
    const ratio = baseline ? row.opsPerSec / baseline.opsPerSec : 1;
    const verdict = judge(`${title}: ${row.name} / ${baseline?.name}`, ratio, '', settings.aims?.[row.name]);
    console.log(
      `  ${row.name.padEnd(44)} ${row.opsPerSec.toFixed(0).padStart(9)} ops/s  ` +
        `(${row.ops} ops in ${row.ms.toFixed(0)} ms)  ratio ${ratio.toFixed(2)}${verdict}`,
    );
  }
  for (const { row, other, aim } of settings.versus ?? []) {
    const subject = rows.find((candidate) => candidate.name === row);
    const against = rows.find((candidate) => candidate.name === other);
    if (!subject || !against) throw new Error(`printComparison: no row ${subject ? other : row}`);
    const ratio = subject.opsPerSec / against.opsPerSec;
    const verdict = judge(`${title}: ${row} / ${other}`, ratio, '', aim);
    console.log(`  ${`${row} / ${other}`.padEnd(44)} ratio ${ratio.toFixed(2)}${verdict}`);
  }
}

/** Prints one figure, judged against its aim when it has one (e.g. RSS against a budget). */
export function printFigure(label: string, value: number, unit: string, aim?: Aim): void {
  const verdict = judge(label, value, unit, aim);
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
