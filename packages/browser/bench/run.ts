/**
 * Browser benchmark: time to the first snapshot from a cold start, per-action latency on a
 * local page, and the browser's memory. The baseline is bare Playwright driving the same
 * Chromium with the same flags, so the ratios show what the service adds (deadlines,
 * tab bookkeeping, snapshot bounding) and what the private-address proxy costs.
 *
 * Run: `npx -y pnpm@10 bench browser`
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { interleave, printComparison, printFigure } from '../../../tooling/bench/harness.js';
import { type BrowserService, createBrowserService } from '../src/index.js';
import { findExecutable, HEADLESS_ARGS } from '../src/internal/executable.js';
import { findProcesses } from '../src/internal/processes.js';

const page = `<!doctype html><title>Bench</title><h1>Bench</h1>
<form><label>Name <input id="name"></label><button type="button" onclick="this.textContent='Clicked '+Date.now()">Go</button></form>
${Array.from({ length: 60 }, (_, i) => `<p>Paragraph ${i} with <a href="#p${i}">a link</a></p>`).join('\n')}`;

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' }).end(page);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;
const url = `http://127.0.0.1:${port}/`;
const executablePath = findExecutable(undefined);

async function launchBare(profileDir: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath,
    headless: true,
    args: HEADLESS_ARGS,
    viewport: { width: 1280, height: 720 },
    handleSIGHUP: false,
    handleSIGINT: false,
    handleSIGTERM: false,
  });
  return { context, page: context.pages()[0] ?? (await context.newPage()) };
}

function serviceFor(dataDir: string, allowPrivateNetwork: boolean): BrowserService {
  return createBrowserService({
    dataDir,
    ...(allowPrivateNetwork ? { allowPrivateNetwork: true } : { allowedHosts: [`127.0.0.1:${port}`] }),
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Resident and proportional memory of every process of one browser, in MB. */
function memoryOf(profileDir: string): { rss: number; pss: number; processes: number } {
  let rss = 0;
  let pss = 0;
  const pids = findProcesses(profileDir).filter((pid) => pid !== process.pid);
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      // Exited while being measured.
    }
  }
  return { rss: rss / 1024, pss: pss / 1024, processes: pids.length };
}

const work = mkdtempSync(join(tmpdir(), 'agentd-browser-bench-'));
const rounds = 5;

// 1. Cold start to first snapshot, alternating subjects round by round.
console.log(`\nCold start → first snapshot of ${url} (median of ${rounds})`);
const cold: Record<string, number[]> = { playwright: [], service: [], 'service + proxy': [] };
for (let round = 0; round < rounds; round++) {
  {
    const started = performance.now();
    const { context, page: tab } = await launchBare(join(work, `bare-${round}`));
    await tab.goto(url);
    await tab.ariaSnapshotJSON({ mode: 'ai' });
    cold.playwright?.push(performance.now() - started);
    await context.close();
  }
  for (const [name, open] of [
    ['service', true],
    ['service + proxy', false],
  ] as const) {
    const started = performance.now();
    const service = serviceFor(join(work, `${name.replace(/\W+/g, '-')}-${round}`), open);
    await service.navigate({ url });
    await service.snapshot();
    cold[name]?.push(performance.now() - started);
    await service.shutdown();
  }
}
const baselineCold = median(cold.playwright ?? []);
for (const [name, values] of Object.entries(cold)) {
  const value = median(values);
  console.log(
    `  ${name.padEnd(44)} ${value.toFixed(0).padStart(9)} ms  ratio ${(value / baselineCold).toFixed(2)}`,
  );
}

// 2. Per-action latency on a warm browser.
const bare = await launchBare(join(work, 'bare-warm'));
await bare.page.goto(url);
const service = serviceFor(join(work, 'service-warm'), true);
await service.navigate({ url });
const proxied = serviceFor(join(work, 'proxied-warm'), false);
await proxied.navigate({ url });

async function loop(ms: number, op: () => Promise<unknown>): Promise<number> {
  const until = performance.now() + ms;
  let ops = 0;
  while (performance.now() < until) {
    await op();
    ops++;
  }
  return ops;
}

const options = { warmupMs: 500, durationMs: 1500, rounds: 3 };
const actions: Array<[string, () => Promise<unknown>, () => Promise<unknown>, () => Promise<unknown>]> = [
  [
    'navigate (local page, load)',
    () => bare.page.goto(url),
    () => service.navigate({ url }),
    () => proxied.navigate({ url }),
  ],
  [
    'snapshot (tree with refs)',
    () => bare.page.ariaSnapshotJSON({ mode: 'ai' }),
    () => service.snapshot(),
    () => proxied.snapshot(),
  ],
  [
    'act fill',
    () => bare.page.locator('#name').fill('hello'),
    () => service.act({ action: 'fill', selector: '#name', value: 'hello' }),
    () => proxied.act({ action: 'fill', selector: '#name', value: 'hello' }),
  ],
  [
    'act click',
    () => bare.page.locator('button').click(),
    () => service.act({ action: 'click', selector: 'button' }),
    () => proxied.act({ action: 'click', selector: 'button' }),
  ],
  [
    'screenshot (viewport PNG)',
    () => bare.page.screenshot({ type: 'png' }),
    () => service.screenshot(),
    () => proxied.screenshot(),
  ],
];
for (const [label, baseline, subject, subjectProxied] of actions) {
  const rows = await interleave(
    [
      { name: 'playwright', runFor: (ms) => loop(ms, baseline) },
      { name: 'service', runFor: (ms) => loop(ms, subject) },
      { name: 'service + proxy', runFor: (ms) => loop(ms, subjectProxied) },
    ],
    options,
  );
  printComparison(label, rows, 'playwright');
  for (const row of rows) printFigure(`  ${row.name} latency`, row.ms / row.ops, 'ms');
}

// 3. Memory of the warm browsers (every Chromium process of each profile).
console.log('\nBrowser memory with one tab on the bench page');
const bareMemory = memoryOf(join(work, 'bare-warm'));
const serviceMemory = memoryOf(service.profileDir);
printFigure(`playwright RSS (${bareMemory.processes} processes)`, bareMemory.rss, 'MB');
printFigure('playwright PSS', bareMemory.pss, 'MB');
printFigure(`service RSS (${serviceMemory.processes} processes)`, serviceMemory.rss, 'MB');
printFigure('service PSS', serviceMemory.pss, 'MB');

await bare.context.close();
await service.shutdown();
await proxied.shutdown();
server.close();
rmSync(work, { recursive: true, force: true });
