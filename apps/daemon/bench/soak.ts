/**
 * The soak benchmark (`bench/run.ts --part soak [--minutes N]`, 30 by default): a steady mix of
 * everything a daemon serves for a long time, with the daemon's RSS, heap and event-loop lag
 * sampled every 10 s from its own `/metrics`; each second's calls start spread over the second.
 * Aims: after the first 5 minutes RSS grows less than 5 MB per 10 minutes (least-squares slope),
 * event-loop lag p99 under 20 ms, no failed call, and every channel message delivered exactly once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_LOOP_RESOLUTION_MS } from '@agentd/metrics';
import { signatureHeaders } from '@agentd/webhooks-hmac';
import WebSocket from 'ws';

/** A daemon started by the caller for the soak, with its config already holding {@link soakConfig}. */
export interface SoakTarget {
  port: number;
  token: string;
}

/** What the daemon's config.yaml needs for the soak: a webhook mapping and Telegram at `telegramUrl`. */
export function soakConfig(telegramUrl: string): string {
  return [
    'webhooks:',
    '  enabled: true',
    `  token: ${WEBHOOK_SECRET}`,
    '  mappings:',
    '    - id: soak',
    "      messageTemplate: 'soak event {{n}}'",
    "      sessionKey: 'hook:soak:{{s}}'",
    'channels:',
    '  telegram:',
    '    enabled: true',
    `    botToken: '${TELEGRAM_TOKEN}'`,
    `    apiBaseUrl: ${telegramUrl}`,
    '',
  ].join('\n');
}

/**
 * Memories the soak keeps: each write past this many deletes the oldest, so the store reaches a
 * steady size (in 200 s at 10 writes a second) and what grows after that is not data.
 */
const MEMORIES_KEPT = 2000;

export const WEBHOOK_SECRET = 'soak-webhook-secret-0123456789abcdef';
export const TELEGRAM_TOKEN = '123456:soak-bot-token';

/** One sample of the daemon, read from its /metrics. */
interface Sample {
  atS: number;
  rssMb: number;
  heapMb: number;
  /** p99 of the loop's delay over the 10 s before the sample, beyond the sampling timer's period. */
  lagP99Ms: number;
}

/** The soak's outcome, with the figures its aims are judged on. */
export interface SoakResult {
  samples: Sample[];
  /** MB per 10 minutes, least squares over the samples after the first 5 minutes. */
  rssSlopeMbPer10Min: number;
  lagP99Ms: number;
  errors: number;
  /** What the first few failures were (method or path, and the error), so a run says why. */
  failures: string[];
  calls: number;
  /** Messages sent through message.send that the platform received other than exactly once. */
  deliveryMismatches: number;
  /** Runs of the 10-second cron job recorded, and how many fewer than its schedule allows. */
  cronFires: number;
  cronFiresMissing: number;
}

/** The value of an unlabelled series in a Prometheus text exposition, or NaN. */
function metricValue(text: string, name: string): number {
  const line = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return line ? Number(line[1]) : Number.NaN;
}

/**
 * Runs the mixed traffic for `minutes` against `target`, counting what the fake platform
 * received through `received(text)` (how many times a text reached it).
 */
export async function soak(
  target: SoakTarget,
  options: { minutes: number; received: (text: string) => number; svgPath?: string },
): Promise<SoakResult> {
  const base = `http://127.0.0.1:${target.port}`;
  const auth = { authorization: `Bearer ${target.token}` };
  let calls = 0;
  let errors = 0;
  const failures: string[] = [];
  const fail = (what: string, error: unknown) => {
    errors++;
    const text = error instanceof Error ? error.message : JSON.stringify(error);
    if (failures.length < 5) failures.push(`${what}: ${String(text).slice(0, 200)}`);
  };
  const sentTexts: string[] = [];
  const rpc = async (method: string, params: unknown) => {
    calls++;
    const response = await fetch(`${base}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ jsonrpc: '2.0', id: calls, method, params }),
    });
    const body = (await response.json()) as { error?: unknown; result?: unknown };
    if (body.error) fail(method, body.error);
    return body.result;
  };
  await rpc('cron.add', {
    name: 'soak-tick',
    schedule: { kind: 'interval', everyMs: 10_000 },
    message: 'tick',
  });

  const started = Date.now();
  const until = started + options.minutes * 60_000;
  const samples: Sample[] = [];
  const sample = async () => {
    const text = await (await fetch(`${base}/metrics`, { headers: auth })).text();
    samples.push({
      atS: (Date.now() - started) / 1000,
      rssMb: metricValue(text, 'process_resident_memory_bytes') / 2 ** 20,
      heapMb: metricValue(text, 'nodejs_heap_size_used_bytes') / 2 ** 20,
      // The figure includes the sampling timer's own period (an idle loop reads it): less that.
      lagP99Ms: Math.max(
        0,
        metricValue(text, 'nodejs_eventloop_lag_p99_seconds') * 1000 - EVENT_LOOP_RESOLUTION_MS,
      ),
    });
  };
  await sample();
  const sampler = setInterval(() => void sample().catch((error) => fail('GET /metrics', error)), 10_000);

  let n = 0;
  const kept: string[] = [];
  /**
   * One second of traffic. Its calls start spread evenly over the second, kinds interleaved, as
   * independent clients' requests arrive; a burst of all of them at one instant would measure
   * how long the loop takes to work through a queue of 37 calls, not how long any one blocks it.
   */
  const second = async () => {
    const jobs: Array<() => Promise<unknown>> = [];
    for (let i = 0; i < 10; i++) {
      const k = n++;
      jobs.push(() =>
        rpc('agent.execute', { message: `question ${k}`, sessionKey: `soak:chat:u${k % 200}` }),
      );
      jobs.push(async () => {
        const stored = (await rpc('memory.store', { content: `fact ${k}: project ${k % 97} shipped` })) as
          | { id?: string }
          | undefined;
        if (stored?.id) kept.push(stored.id);
        // The store holds the latest MEMORIES_KEPT: a steady state, so growth is a leak, not data.
        const oldest = kept.length > MEMORIES_KEPT ? kept.shift() : undefined;
        if (oldest) await rpc('memory.delete', { id: oldest });
      });
      jobs.push(() => rpc('memory.search', { query: `project ${k % 97}`, limit: 5 }));
    }
    const socketTurns = n;
    jobs.push(() =>
      wsTurns(
        target,
        socketTurns,
        (error) => fail('agent.execute over WebSocket', error),
        () => calls++,
      ),
    );
    jobs.push(() => sseTurn(base, auth, socketTurns).catch((error) => fail('SSE turn', error)));
    for (let i = 0; i < 2; i++) {
      const k = n++;
      const body = JSON.stringify({ n: k, s: k % 20 });
      jobs.push(() => {
        calls++;
        return fetch(`${base}/hooks/soak`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...signatureHeaders({ secret: WEBHOOK_SECRET, body }),
          },
          body,
        }).then((r) => void (r.status === 200 || fail('POST /hooks/soak', `HTTP ${r.status}`)));
      });
      const text = `soak delivery ${k}`;
      sentTexts.push(text);
      jobs.push(() =>
        rpc('message.send', { channel_type: 'telegram', channel_id: String(100 + (k % 10)), text }),
      );
    }
    const spacing = 1000 / jobs.length;
    await Promise.all(
      jobs.map((job, i) => new Promise((resolve) => setTimeout(resolve, i * spacing)).then(job)),
    );
  };
  while (Date.now() < until) {
    const tick = Date.now();
    await second().catch((error) => fail('traffic', error));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - tick))));
  }
  clearInterval(sampler);
  await sample();
  // The queue drains what was accepted last.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const deliveryMismatches = sentTexts.filter((text) => options.received(text) !== 1).length;
  // The job fires every 10 s: one fire may be in flight at either end of the run.
  const runs = (await rpc('cron.runs', { jobName: 'soak-tick', limit: 1000 })) as
    | { runs?: unknown[] }
    | undefined;
  const cronFires = runs?.runs?.length ?? 0;
  const cronFiresMissing = Math.max(0, Math.floor((Date.now() - started) / 10_000) - 1 - cronFires);
  const settled = samples.filter((s) => s.atS >= Math.min(300, (options.minutes * 60) / 6));
  const result: SoakResult = {
    samples,
    rssSlopeMbPer10Min: slope(settled.map((s) => [s.atS, s.rssMb])) * 600,
    lagP99Ms: Math.max(...samples.map((s) => s.lagP99Ms).filter(Number.isFinite), 0),
    errors,
    failures,
    calls,
    deliveryMismatches,
    cronFires,
    cronFiresMissing,
  };
  console.log(chart(samples));
  if (options.svgPath) writeFileSync(options.svgPath, svg(samples));
  return result;
}

/** One WebSocket opened, two turns on it, closed: sockets come and go all through the soak. */
async function wsTurns(
  target: SoakTarget,
  n: number,
  failed: (error: unknown) => void,
  counted: () => void,
): Promise<void> {
  const ws = new WebSocket(`ws://127.0.0.1:${target.port}/ws`, {
    headers: { authorization: `Bearer ${target.token}` },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    for (let id = 1; id <= 2; id++) {
      counted();
      const answer = await new Promise<{ error?: unknown }>((resolve) => {
        ws.on('message', (data) => {
          const parsed = JSON.parse(data.toString()) as { id?: number; error?: unknown };
          if (parsed.id === id) resolve(parsed);
        });
        ws.send(
          JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'agent.execute',
            params: { message: `ws ${n}`, sessionKey: `soak:ws:u${n % 50}` },
          }),
        );
      });
      if (answer.error) failed(answer.error);
    }
  } catch (error) {
    failed(error);
  } finally {
    ws.terminate();
  }
}

/** One turn over the chat stream; fails unless it ends with `done`. */
async function sseTurn(base: string, auth: Record<string, string>, n: number): Promise<void> {
  const url = `${base}/api/chat/stream?message=${encodeURIComponent(`stream ${n}`)}&sessionKey=soak:sse:u${n % 20}`;
  const text = await (await fetch(url, { headers: auth })).text();
  if (!text.includes('event: done')) throw new Error('the stream did not end with done');
}

/** Least-squares slope of y over x. */
export function slope(points: Array<[number, number]>): number {
  if (points.length < 2) return 0;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

/** RSS over time as a small terminal chart, 60 columns by 12 rows. */
export function chart(samples: Sample[], width = 60, height = 12): string {
  if (samples.length === 0) return '';
  const values = samples.map((s) => s.rssMb);
  const low = Math.min(...values);
  const high = Math.max(...values, low + 1);
  const rows = Array.from({ length: height }, () => Array.from({ length: width }, () => ' '));
  values.forEach((value, i) => {
    const x = Math.round((i / Math.max(1, values.length - 1)) * (width - 1));
    const y = height - 1 - Math.round(((value - low) / (high - low)) * (height - 1));
    (rows[y] as string[])[x] = '*';
  });
  const label = (y: number) => (high - ((high - low) * y) / (height - 1)).toFixed(1).padStart(7);
  return [
    'RSS, MB',
    ...rows.map((row, y) => `${label(y)} |${row.join('')}`),
    `        +${'-'.repeat(width)}`,
    `         0 s${' '.repeat(width - 10)}${Math.round(samples.at(-1)?.atS ?? 0)} s`,
  ].join('\n');
}

/** RSS and heap over time as an SVG line chart. */
export function svg(samples: Sample[]): string {
  const w = 640;
  const h = 240;
  const pad = 40;
  const end = Math.max(1, samples.at(-1)?.atS ?? 1);
  const high = Math.max(1, ...samples.map((s) => s.rssMb)) * 1.1;
  const path = (pick: (s: Sample) => number) =>
    samples
      .map(
        (s, i) =>
          `${i === 0 ? 'M' : 'L'}${(pad + (s.atS / end) * (w - 2 * pad)).toFixed(1)},${(h - pad - (pick(s) / high) * (h - 2 * pad)).toFixed(1)}`,
      )
      .join(' ');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="11">`,
    `<title>agentd soak: RSS and heap over ${Math.round(end)} s</title>`,
    `<rect width="${w}" height="${h}" fill="white"/>`,
    `<line x1="${pad}" y1="${h - pad}" x2="${w - pad}" y2="${h - pad}" stroke="black"/>`,
    `<line x1="${pad}" y1="${pad}" x2="${pad}" y2="${h - pad}" stroke="black"/>`,
    `<text x="${pad}" y="${pad - 8}">MB (0-${high.toFixed(0)}); RSS solid, heap dashed; ${Math.round(end)} s</text>`,
    `<path d="${path((s) => s.rssMb)}" fill="none" stroke="#c0392b" stroke-width="1.5"/>`,
    `<path d="${path((s) => s.heapMb)}" fill="none" stroke="#2c3e50" stroke-dasharray="4 3"/>`,
    '</svg>',
    '',
  ].join('\n');
}

/** Where the SVG of a run is written: next to the daemon README's figures. */
export const SOAK_SVG = join(import.meta.dirname, '..', 'soak-rss.svg');
