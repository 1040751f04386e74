/**
 * Gateway benchmarks: the daemon against baselines measured in the same run.
 *
 *   pnpm bench daemon            (from the repository root; builds first)
 *
 * Every server runs in its own child process so the load generator (this process) and the
 * server each get a core. Subjects alternate in rounds so machine noise hits all alike.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startFakeTelegram } from '../../../packages/channels/test/fake-telegram.js';
import { SOAK_SVG, soak, soakConfig, TELEGRAM_TOKEN } from './soak.js';
import { httpPostLoad, interleave, printComparison, printFigure } from '../../../tooling/bench/harness.js';
import { burstLoad, type LoadTarget, mixedLoad, sessionLoad, warmUp } from './loads.js';
import { startTree } from './process-tree.js';

const here = import.meta.dirname;
const TOKEN = 'bench-admin-token-0123456789abcdef0123456789';
const CONNECTIONS = 16;
const PIPELINE = 8;
/** The gateway's aims (issue #14); `pnpm bench --check` fails when a run misses one. */
const AIMS = {
  /**
   * WebSocket system.ping round trips, full stack / bare `ws` echo with the same per-tick write
   * batching as the daemon (a fair bare server: the ratio is the daemon's own cost).
   */
  wsVsBare: { above: 0.9 },
  /** The full stack / the `json-rpc-2.0` library over the same `ws`, batched alike. */
  wsVsLibrary: { above: 1 },
  /** HTTP POST /rpc system.ping / bare node:http JSON echo. */
  httpVsBare: { above: 0.85 },
  /**
   * RSS of a fresh daemon left idle for IDLE_SECONDS after it listens, MB (no V8 flag switched
   * after start): what a user sees once start-up has settled.
   */
  idleRssMb: { below: 100 },
  /** Soak: RSS growth after the first 5 minutes, MB per 10 minutes (least squares). */
  soakRssSlopeMbPer10Min: { below: 5 },
  /** Soak: the highest sampled event-loop lag p99, ms. */
  soakLagP99Ms: { below: 20 },
  /** Soak: failed calls, and channel messages delivered other than once. */
  soakErrors: { below: 1 },
  /** RSS with 1,000 idle authenticated sockets, IDLE_SECONDS after the last opened, MB. */
  socketsRssMb: { below: 120 },
  /** RSS 60 s after a load (20,000 sessions, mixed traffic, bursts) ended, over the RSS before it, MB (issue #23). */
  afterLoadGrowthMb: { below: 15 },
  /** The same after 100,000 one-turn sessions (`--sessions 100000`), MB (issue #23). */
  after100kSessionsGrowthMb: { below: 30 },
  /** POST /v1/chat/completions / POST /rpc agent.execute, offline provider (issue #21). */
  openAiVsRpc: { above: 0.9 },
};
/** One-turn sessions of the memory-under-load run (`--sessions N`). */
const LOAD_SESSIONS = Number(process.argv[process.argv.indexOf('--sessions') + 1]) || 20_000;
/** Seconds of mixed traffic (`--mixed-seconds N`). */
const MIXED_SECONDS = Number(process.argv[process.argv.indexOf('--mixed-seconds') + 1]) || 30;
/** How long after a load its RSS is read again (`--settle-seconds N`). */
const SETTLE_MS = (Number(process.argv[process.argv.indexOf('--settle-seconds') + 1]) || 60) * 1000;
/**
 * How long an idle figure waits (`--idle-seconds N`): the daemon's heap watcher looks every 5 s
 * and collects after two idle looks, so start-up's garbage and the young generation it grew are
 * given back some 10-15 s after the daemon listens. Each idle figure is also printed 1 s in.
 */
const IDLE_SECONDS = Number(process.argv[process.argv.indexOf('--idle-seconds') + 1]) || 30;
/** Which parts run (`--part throughput|openai|memory|load`, repeatable; `--openai` = `--part openai`); all when none is named. */
const PARTS = [
  ...process.argv.flatMap((arg, i) => (process.argv[i - 1] === '--part' ? [arg] : [])),
  ...(process.argv.includes('--openai') ? ['openai'] : []),
];
const runs = (part: string) => PARTS.length === 0 || PARTS.includes(part);
/** Which loads of `--part load` run (`--load sessions|mixed|bursts`, repeatable); all when none is named. */
const LOADS = process.argv.flatMap((arg, i) => (process.argv[i - 1] === '--load' ? [arg] : []));
const loads = (name: string) => LOADS.length === 0 || LOADS.includes(name);

const LIBRARY_WS = 'json-rpc-2.0 library over ws, batched';
const BARE_WS = 'bare ws echo, batched per tick';
const BARE_WS_UNBATCHED = 'bare ws echo, one write per frame';
const DAEMON_WS = 'agentd system.ping (full stack)';
const DAEMON_HTTP = 'agentd POST /rpc system.ping';
const RPC_TURN = 'POST /rpc agent.execute';
const OPENAI_TURN = 'POST /v1/chat/completions';

interface Server {
  child: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

function waitFor(child: ChildProcess, pattern: RegExp, stream: 'stdout' | 'stderr'): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}: ${text}`)), 30_000);
    child[stream]?.on('data', (chunk) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${text}`)));
  });
}

async function startScript(file: string, ...args: string[]): Promise<Server> {
  const child = spawn(process.execPath, [join(here, 'servers', file), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = Number(await waitFor(child, /PORT (\d+)/, 'stdout'));
  return { child, port, stop: () => kill(child) };
}

async function startDaemonProcess(extraConfig = ''): Promise<Server & { dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentd-bench-'));
  // Full stack as shipped: auth, scope, zod, logging at info; only the rate limiter is off.
  writeFileSync(
    join(dataDir, 'config.yaml'),
    `gateway:\n  wsMessageRateLimit:\n    maxMessages: 0\n    windowMs: 10000\n  wsHeartbeatMs: 30000\n${extraConfig}`,
  );
  const child = spawn(
    process.execPath,
    // As the `agentd` launcher starts it (`--expose-gc` for the idle collection after a load).
    // AGENTD_BENCH_NODE_ARGS adds node flags (`--cpu-prof --cpu-prof-dir=/tmp/p` to profile a part).
    [
      '--expose-gc',
      ...(process.env.AGENTD_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
      join(here, '..', 'dist', 'cli.js'),
      'start',
      '--data-dir',
      dataDir,
      '--port',
      '0',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...daemonEnv(), AGENTD_ADMIN_TOKEN: TOKEN } },
  );
  const url = await waitFor(child, /agentd listening on http:\/\/127\.0\.0\.1:(\d+)/, 'stderr');
  return {
    child,
    port: Number(url),
    dataDir,
    stop: async () => {
      await kill(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The environment `agentd start` gets from a user's shell or `pnpm start`: this process's,
 * without the `NODE_PATH` that pnpm's `tsx` shim sets for the benchmark itself. With it, node's
 * module-path set-up at boot runs hot enough to start TurboFan before the daemon's own code
 * runs, which adds some 3 MB of compiler pages to the idle figure of a daemon nobody runs that
 * way.
 */
function daemonEnv(): NodeJS.ProcessEnv {
  const { NODE_PATH: _tsxShimPath, ...env } = process.env;
  return env;
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function openSockets(port: number, count: number, withToken: boolean): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < count; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, {
      headers: withToken ? { authorization: `Bearer ${TOKEN}` } : {},
      perMessageDeflate: false,
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    sockets.push(ws);
  }
  return sockets;
}

/** Each connection keeps PIPELINE pings in flight for `ms`; returns completed round trips. */
function wsLoad(sockets: WebSocket[]) {
  return (ms: number) =>
    new Promise<number>((resolve) => {
      let done = 0;
      let stopping = false;
      let outstanding = 0;
      let id = 0;
      const finish = () => {
        for (const ws of sockets) ws.removeAllListeners('message');
        resolve(done);
      };
      for (const ws of sockets) {
        const send = () => {
          outstanding++;
          ws.send(`{"jsonrpc":"2.0","method":"system.ping","id":${++id}}`);
        };
        ws.on('message', () => {
          done++;
          outstanding--;
          if (!stopping) send();
          else if (outstanding === 0) finish();
        });
        for (let i = 0; i < PIPELINE; i++) send();
      }
      setTimeout(() => {
        stopping = true;
      }, ms);
    });
}

function httpLoad(port: number, path: string, token: string | undefined) {
  return httpPostLoad({
    port,
    path,
    body: '{"jsonrpc":"2.0","method":"system.ping","id":1}',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    connections: CONNECTIONS,
  });
}

async function main() {
  const daemon = await startDaemonProcess();
  // Every WebSocket server batches a tick's answers into one write as the daemon does, so the
  // ratios are the daemon's cost over a fair bare server; the unbatched bare server is measured
  // only for the separate line of what the batching itself buys.
  const bareWs = await startScript('bare-ws.mjs', '--batch');
  const bareWsUnbatched = await startScript('bare-ws.mjs');
  const libWs = await startScript('jsonrpc2-ws.mjs', '--batch');
  const bareHttp = await startScript('bare-http.mjs');
  try {
    const daemonSockets = await openSockets(daemon.port, CONNECTIONS, true);
    const bareSockets = await openSockets(bareWs.port, CONNECTIONS, false);
    const unbatchedSockets = await openSockets(bareWsUnbatched.port, CONNECTIONS, false);
    const libSockets = await openSockets(libWs.port, CONNECTIONS, false);
    const ws = await interleave([
      { name: BARE_WS, runFor: wsLoad(bareSockets) },
      { name: LIBRARY_WS, runFor: wsLoad(libSockets) },
      { name: DAEMON_WS, runFor: wsLoad(daemonSockets) },
      { name: BARE_WS_UNBATCHED, runFor: wsLoad(unbatchedSockets) },
    ]);
    const fair = ws.filter((row) => row.name !== BARE_WS_UNBATCHED);
    printComparison(`WebSocket round trips, ${CONNECTIONS} connections x ${PIPELINE} pipelined`, fair, {
      baseline: BARE_WS,
      aims: { [DAEMON_WS]: AIMS.wsVsBare },
      versus: [{ row: DAEMON_WS, other: LIBRARY_WS, aim: AIMS.wsVsLibrary }],
    });
    printComparison(
      'What per-tick write batching buys a bare ws server (not a figure of the daemon)',
      ws.filter((row) => row.name === BARE_WS_UNBATCHED || row.name === BARE_WS),
      BARE_WS_UNBATCHED,
    );
    for (const s of [...daemonSockets, ...bareSockets, ...unbatchedSockets, ...libSockets]) s.close();

    const http = await interleave([
      { name: 'bare node:http JSON echo', runFor: httpLoad(bareHttp.port, '/', undefined) },
      { name: DAEMON_HTTP, runFor: httpLoad(daemon.port, '/rpc', TOKEN) },
    ]);
    printComparison(`HTTP requests, ${CONNECTIONS} keep-alive connections`, http, {
      aims: { [DAEMON_HTTP]: AIMS.httpVsBare },
    });
  } finally {
    await Promise.all([daemon.stop(), bareWs.stop(), bareWsUnbatched.stop(), libWs.stop(), bareHttp.stop()]);
  }
}

/** Memory on a fresh daemon, so the throughput runs above do not inflate its heap. */
async function memory() {
  const daemon = await startDaemonProcess();
  try {
    console.log('\nDaemon memory (fresh process)');
    await idleFigures('idle daemon RSS', () => rssMb(daemon.child.pid!), AIMS.idleRssMb);
    const idle = await openSockets(daemon.port, 1000, true);
    // Prove every socket is authenticated: one ping each.
    await Promise.all(
      idle.map(
        (ws, i) =>
          new Promise<void>((resolve) => {
            ws.once('message', () => resolve());
            ws.send(`{"jsonrpc":"2.0","method":"system.ping","id":${i}}`);
          }),
      ),
    );
    await idleFigures('RSS with 1,000 idle sockets', () => rssMb(daemon.child.pid!), AIMS.socketsRssMb);
    for (const ws of idle) ws.terminate();
  } finally {
    await daemon.stop();
  }
  await startCommandTrees();
}

/** Prints `read()` 1 s from now, then IDLE_SECONDS from now against `aim`. */
async function idleFigures(label: string, read: () => number, aim: { below: number } | undefined) {
  const start = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  printFigure(`${label}, 1 s idle`, read(), 'MB');
  await new Promise((resolve) => setTimeout(resolve, start + IDLE_SECONDS * 1000 - Date.now()));
  printFigure(`${label}, ${IDLE_SECONDS} s idle`, read(), 'MB', aim);
}

/**
 * What the README's start command leaves running, idle, summed over its whole process tree:
 * `./agentd start` execs node (one process), `npx -y pnpm@10 start` keeps npx, pnpm and a shell.
 */
async function startCommandTrees() {
  console.log('\nIdle process tree of a start command (after it listens)');
  const root = join(here, '..', '..', '..');
  const env = { ...daemonEnv(), AGENTD_ADMIN_TOKEN: TOKEN };
  for (const [command, aim] of [
    ['./agentd start', AIMS.idleRssMb],
    ['npx -y pnpm@10 start', undefined],
  ] as const) {
    const tree = await startTree(command, root, env, '');
    try {
      const count = tree.size();
      await idleFigures(`${command} (${count} process${count === 1 ? '' : 'es'})`, tree.rssMb, aim);
    } finally {
      await tree.stop();
    }
  }
}

/**
 * Memory under load (issue #23), each load on a fresh daemon: one-turn sessions with 2 KB
 * messages, mixed traffic from 120 clients, and three bursts of 200 sockets; RSS before (after
 * one warm-up call of each method the loads use and IDLE_SECONDS idle), at the peak, and 60 s
 * after the clients left.
 */
async function memoryUnderLoad() {
  const sessionsAim = LOAD_SESSIONS >= 100_000 ? AIMS.after100kSessionsGrowthMb : AIMS.afterLoadGrowthMb;
  if (loads('sessions')) {
    await underLoad(
      `${LOAD_SESSIONS} one-turn sessions, 2 KB messages, 50 at a time`,
      sessionsAim,
      (target) => sessionLoad(target, LOAD_SESSIONS),
    );
  }
  if (loads('mixed')) {
    await underLoad(
      `${MIXED_SECONDS} s of mixed traffic, 100 WebSocket + 20 HTTP clients`,
      AIMS.afterLoadGrowthMb,
      (target) => mixedLoad(target, MIXED_SECONDS * 1000),
    );
  }
  if (loads('bursts')) {
    await underLoad('3 bursts of 200 sockets x 20 turns', AIMS.afterLoadGrowthMb, async (target) => {
      for (let cycle = 0; cycle < 3; cycle++) await burstLoad(target, cycle);
    });
  }
}

async function underLoad(title: string, aim: { below: number }, load: (target: LoadTarget) => Promise<void>) {
  const daemon = await startDaemonProcess();
  try {
    console.log(`\nDaemon memory under load: ${title}`);
    const pid = daemon.child.pid!;
    await warmUp({ port: daemon.port, token: TOKEN, sampleRss: () => {} });
    // Settled as the idle figures are, so the growth is not measured from start-up's young
    // generation, which the first idle collection gives back whether or not a load came.
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const before = rssMb(pid);
    let peak = before;
    await load({ port: daemon.port, token: TOKEN, sampleRss: () => (peak = Math.max(peak, rssMb(pid))) });
    peak = Math.max(peak, rssMb(pid));
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const after = rssMb(pid);
    printFigure('RSS before the load', before, 'MB');
    printFigure('RSS at the peak of the load', peak, 'MB');
    printFigure(`RSS ${SETTLE_MS / 1000} s after the load`, after, 'MB');
    printFigure(`growth ${SETTLE_MS / 1000} s after the load`, after - before, 'MB', aim);
  } finally {
    await daemon.stop();
  }
}

/**
 * The OpenAI-compatible API's overhead (issue #21): the same offline-provider turn through
 * `POST /v1/chat/completions` (non-streaming) and `POST /rpc agent.execute`, interleaved on
 * one daemon. Each subject keeps to one session of its own, so both histories grow alike.
 */
async function openAiOverhead() {
  // The per-token limit of /v1 is off, as the WebSocket limiter is for the other runs.
  const daemon = await startDaemonProcess('openaiApi:\n  enabled: true\n  rateLimit:\n    maxRequests: 0\n');
  try {
    const message = 'a benchmark turn of about the size of a short chat message';
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
    const turns = await interleave([
      {
        name: RPC_TURN,
        runFor: httpPostLoad({
          port: daemon.port,
          path: '/rpc',
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'agent.execute',
            params: { message, sessionKey: 'bench:rpc:turns' },
          }),
          headers,
          connections: CONNECTIONS,
        }),
      },
      {
        name: OPENAI_TURN,
        runFor: httpPostLoad({
          port: daemon.port,
          path: '/v1/chat/completions',
          body: JSON.stringify({
            model: 'agentd/default',
            messages: [{ role: 'user', content: message }],
            user: 'turns',
          }),
          headers,
          connections: CONNECTIONS,
        }),
      },
    ]);
    printComparison(`Agent turns (offline provider), ${CONNECTIONS} keep-alive connections`, turns, {
      baseline: RPC_TURN,
      aims: { [OPENAI_TURN]: AIMS.openAiVsRpc },
    });
  } finally {
    await daemon.stop();
  }
}

if (runs('throughput')) await main();
if (runs('openai')) await openAiOverhead();
if (runs('memory')) await memory();
if (runs('load')) await memoryUnderLoad();
// 30 minutes (`--minutes N`): only when named, never part of a plain run.
if (PARTS.includes('soak')) await soakRun();

/** The soak on a fresh daemon whose Telegram is a local fake Bot API (`bench/soak.ts`). */
async function soakRun() {
  const telegram = await startFakeTelegram({ token: TELEGRAM_TOKEN });
  const daemon = await startDaemonProcess(soakConfig(telegram.url));
  const minutes = Number(process.argv[process.argv.indexOf('--minutes') + 1]) || 30;
  try {
    const result = await soak(
      { port: daemon.port, token: TOKEN },
      {
        minutes,
        svgPath: SOAK_SVG,
        received: (text) => telegram.of('sendMessage').filter((call) => call.params.text === text).length,
      },
    );
    console.log(
      `soak: ${minutes} min, ${result.calls} calls, ${result.samples.length} samples (chart: ${SOAK_SVG})`,
    );
    printFigure(
      'RSS growth after the first 5 minutes (least squares)',
      result.rssSlopeMbPer10Min,
      'MB/10 min',
      AIMS.soakRssSlopeMbPer10Min,
    );
    console.log(
      `  event-loop lag p99 of each 10 s, ms: ${result.samples.map((s) => Math.round(s.lagP99Ms)).join(' ')}`,
    );
    printFigure('event-loop lag p99, highest sample', result.lagP99Ms, 'ms', AIMS.soakLagP99Ms);
    printFigure('failed calls', result.errors, '', AIMS.soakErrors);
    for (const failure of result.failures) console.log(`    ${failure}`);
    printFigure(
      'channel messages not delivered exactly once',
      result.deliveryMismatches,
      '',
      AIMS.soakErrors,
    );
    printFigure(
      `cron fires missing (${result.cronFires} recorded)`,
      result.cronFiresMissing,
      '',
      AIMS.soakErrors,
    );
  } finally {
    await daemon.stop();
    await telegram.close();
  }
}
