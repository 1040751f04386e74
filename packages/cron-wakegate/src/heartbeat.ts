import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Coordinator, Database, Singleton, Statement } from '@agentd/storage';
import type { z } from 'zod';
import { type HeartbeatSection, heartbeatSectionSchema, heartbeatUpdateSchema } from './config.js';
import { CronWakegateError } from './errors.js';
import { refuseUncoordinated } from './internal/cluster-cron.js';
import { checkFields } from './internal/job-store.js';
import { type CronLogger, noopLogger } from './logger.js';
import { cronWakegateMigrationSet, MIGRATION_PACKAGE } from './migrations.js';
import { type AgentTurnRunner, type EventSink, noopEventSink, type WakeTarget } from './types.js';
import { createWakeCoalescer, type WakeCoalescer, type WakeRequest } from './wake-coalescer.js';

/** The longest wake text kept; longer ones are cut. */
export const MAX_WAKE_TEXT = 16_000;

/** What `heartbeat.status` answers. */
export interface HeartbeatStatus {
  enabled: boolean;
  intervalMs: number;
  agentId: string;
  prompt: string;
  /** Start of the last beat (epoch ms). */
  lastBeatAt?: number;
  /** When the next periodic beat is due; absent while periodic beats are off. */
  nextBeatAt?: number;
  /** Wake texts waiting for the next beat. */
  queued: number;
  /** True while a beat runs or a wake window is open. */
  running: boolean;
}

/** One beat as `heartbeat.history` lists it. */
export interface HeartbeatBeat {
  id: string;
  ts: number;
  agentId: string;
  /** What asked for the beat, one entry per distinct source the coalescer merged (`interval`, `webhook`, ...). */
  sources: string[];
  status: 'ok' | 'error';
  durationMs: number;
  /** Queued wake texts the beat carried. */
  queuedTexts: number;
  summary?: string;
  error?: string;
}

/** Input of {@link HeartbeatService.update}. */
export type HeartbeatUpdate = z.infer<typeof heartbeatUpdateSchema>;

/** Options of {@link createHeartbeatService}. */
export interface HeartbeatServiceOptions {
  /** The shared database; beats and queued texts are stored there. */
  db: Database;
  /**
   * The cluster coordinator. In `postgres` mode periodic beats run on one instance only, the
   * holder of the `cron-wakegate:heartbeat` singleton (renewed every `singletonRenewMs`; another
   * instance takes it over when its holder stops), and every beat carries the texts queued on
   * any instance. Explicit wakes and triggers beat on the instance that got them.
   */
  coordinator?: Coordinator | undefined;
  /** Cluster mode: how often the singleton is renewed or tried. @default 2000 */
  singletonRenewMs?: number | undefined;
  /** Runs the beat's agent turn. */
  runner: AgentTurnRunner;
  /** The `heartbeat` config section (defaults filled in when parsed). */
  settings?: z.input<typeof heartbeatSectionSchema> | undefined;
  /**
   * Called by `update()` with the validated change and the settings it leads to, to make it durable
   * (the daemon writes the change to config.yaml); not called by `configure()`. A throw cancels the update.
   */
  persistSettings?: ((patch: HeartbeatUpdate, settings: HeartbeatSection) => Promise<void>) | undefined;
  /**
   * Clock in epoch ms.
   * @default Date.now
   */
  now?: (() => number) | undefined;
  /**
   * Id source for beats.
   * @default crypto.randomUUID
   */
  randomId?: (() => string) | undefined;
  /** @default a logger that drops everything */
  logger?: CronLogger | undefined;
  /**
   * Receives `heartbeat:beat` per beat (ids, enums and counts only).
   * @default a sink that drops everything
   */
  events?: EventSink | undefined;
}

/** The periodic agent wake; also the {@link WakeTarget} of webhook `wake` actions and `scheduler.wake`. */
export interface HeartbeatService extends WakeTarget {
  /** Migrates, loads the last beat and the queued texts, arms the timer (a beat overdue from before a restart runs soon). */
  start(): Promise<void>;
  status(): HeartbeatStatus;
  /** Newest first; `limit` defaults to 50. */
  history(query?: { limit?: number | undefined }): Promise<HeartbeatBeat[]>;
  /** Asks for a beat now (coalesced with other wakes). */
  trigger(reason?: string): { triggered: true; coalesced: boolean };
  /** The scheduler-wide wake: asks the wake coalescer for a beat; `text` joins the beat's queue. */
  wake(source: string, text?: string): { queued: true; coalesced: boolean };
  /** Validates, persists through `persistSettings`, then applies. Throws `INVALID_JOB` naming the field. */
  update(patch: HeartbeatUpdate): Promise<HeartbeatStatus>;
  /** Applies settings at once (a config change); nothing is persisted. */
  configure(settings: z.input<typeof heartbeatSectionSchema>): void;
  /** Resolves when no beat is pending or running and every write is committed. */
  idle(): Promise<void>;
  /** Stops the timer, interrupts a beat in progress, waits for writes. */
  close(): Promise<void>;
}

interface QueuedText {
  seq: number;
  ts: number;
  text: string;
}

/** Creates the heartbeat service. Call `start()` before use. */
export function createHeartbeatService(options: HeartbeatServiceOptions): HeartbeatService {
  const { db, runner } = options;
  const parse = (input: unknown): HeartbeatSection => {
    const parsed = heartbeatSectionSchema.safeParse(input ?? {});
    if (!parsed.success) {
      throw new CronWakegateError('INVALID_OPTIONS', `invalid heartbeat settings: ${parsed.error.message}`, {
        cause: parsed.error,
      });
    }
    return parsed.data;
  };
  let settings = parse(options.settings);
  const now = options.now ?? Date.now;
  const randomId = options.randomId ?? randomUUID;
  const logger = options.logger ?? noopLogger;
  const events = options.events ?? noopEventSink;
  const singleton: Singleton | undefined =
    options.coordinator?.mode === 'postgres'
      ? options.coordinator.singleton('cron-wakegate:heartbeat')
      : undefined;
  const renewMs = options.singletonRenewMs ?? 2000;
  let renewTimer: ReturnType<typeof setInterval> | undefined;
  const holdSingleton = async (): Promise<boolean> => {
    if (singleton === undefined) return true;
    try {
      return (await singleton.acquire()) !== undefined;
    } catch (err) {
      logger.warn(
        { err, hint: 'check that the PostgreSQL server is reachable', errorKind: 'dependency' },
        'heartbeat singleton not renewed',
      );
      return false;
    }
  };

  let queue: QueuedText[] = [];
  let nextSeq = 1;
  let lastBeatAt: number | undefined;
  let nextBeatAt: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let started = false;
  let closed = false;
  let beating: AbortController | undefined;
  let writes: Promise<unknown> = Promise.resolve();
  // Periodic beats run in the service's own context, not in that of the request that re-armed the timer.
  const detached = new AsyncResource('agentd.heartbeat');
  const coalescer: WakeCoalescer = createWakeCoalescer({
    windowMs: settings.coalesceWindowMs,
    now,
    logger,
    run: (requests) => beat(requests),
  });

  const write = (work: () => Promise<unknown>) => {
    writes = writes.then(work).catch((err: unknown) => {
      logger.error(
        {
          err,
          hint: 'a heartbeat record or queued wake text was not stored; check the database',
          errorKind: 'resource',
        },
        'heartbeat write failed',
      );
    });
  };

  const arm = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    nextBeatAt = undefined;
    if (!started || closed || !settings.enabled) return;
    nextBeatAt = (lastBeatAt ?? now()) + settings.intervalMs;
    // Pieces of at most a minute, so a wall-clock jump or an interval change is honoured soon.
    const wait = Math.min(Math.max(0, nextBeatAt - now()), 60_000);
    timer = setTimeout(
      () =>
        detached.runInAsyncScope(() => {
          timer = undefined;
          if (nextBeatAt !== undefined && now() >= nextBeatAt) {
            nextBeatAt = undefined;
            periodic('interval');
          } else arm();
        }),
      wait,
    );
    timer.unref?.();
  };

  /** A periodic beat: in a cluster only the singleton's holder runs it; the others look again later. */
  const periodic = (source: string) => {
    if (singleton === undefined) {
      coalescer.request(source);
      return;
    }
    void holdSingleton().then(async (held) => {
      if (closed) return;
      if (held) {
        coalescer.request(source);
        return;
      }
      const last = await db
        .get<{ ts: number | null }>('SELECT MAX(ts) AS ts FROM heartbeat_beats')
        .catch(() => undefined);
      if (last?.ts != null) lastBeatAt = Math.max(lastBeatAt ?? 0, Number(last.ts));
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => detached.runInAsyncScope(() => arm()), renewMs);
      timer.unref?.();
    });
  };

  const enqueue = (text: string) => {
    const item: QueuedText = { seq: nextSeq++, ts: now(), text: text.slice(0, MAX_WAKE_TEXT) };
    queue.push(item);
    write(async () => {
      if (singleton === undefined) {
        await db.execute('INSERT INTO heartbeat_queue (seq, ts, text) VALUES (?, ?, ?)', [
          item.seq,
          item.ts,
          item.text,
        ]);
        return;
      }
      // Instances share the queue: the database numbers the texts.
      const row = await db.get<{ seq: number }>(
        'INSERT INTO heartbeat_queue (ts, text) VALUES (?, ?) RETURNING seq',
        [item.ts, item.text],
      );
      item.seq = Number(row?.seq);
    });
    if (queue.length > settings.maxQueuedTexts) {
      const dropped = queue.splice(0, queue.length - settings.maxQueuedTexts);
      write(() =>
        singleton === undefined
          ? db.execute('DELETE FROM heartbeat_queue WHERE seq <= ?', [dropped[dropped.length - 1]!.seq])
          : db.batch(
              dropped.map((item) => ({ sql: 'DELETE FROM heartbeat_queue WHERE seq = ?', args: [item.seq] })),
            ),
      );
      logger.warn(
        {
          itemCount: dropped.length,
          hint: 'wake texts arrive faster than heartbeats run; raise heartbeat.maxQueuedTexts or enable beats',
          errorKind: 'resource',
        },
        'oldest queued wake texts dropped',
      );
    }
  };

  async function beat(requests: WakeRequest[]): Promise<void> {
    if (closed) return;
    if (singleton !== undefined) {
      // Texts queued on any instance ride with this beat.
      await writes;
      queue = await db.query<QueuedText>('SELECT seq, ts, text FROM heartbeat_queue ORDER BY seq');
    }
    const ts = now();
    const current = settings;
    const sources = [...new Set(requests.map((request) => request.source))];
    const carried = queue.slice();
    lastBeatAt = ts;
    arm();
    const message =
      carried.length === 0
        ? current.prompt
        : `${current.prompt}\n\nQueued since the last beat:\n${carried.map((item) => `- ${item.text}`).join('\n')}`;
    const controller = new AbortController();
    beating = controller;
    let status: 'ok' | 'error' = 'ok';
    let summary: string | undefined;
    let error: string | undefined;
    try {
      const result = await runBeatTurn(runner, current, message, controller);
      summary = result.response.slice(0, 500);
    } catch (caught) {
      status = 'error';
      const reason = caught instanceof Error ? caught.message : String(caught);
      error = (closed ? 'interrupted: the daemon shut down during the beat' : reason).slice(0, 2000);
      logger.warn(
        {
          agentId: current.agentId,
          hint: 'the heartbeat turn failed; queued wake texts are kept for the next beat. See heartbeat.history',
          errorKind: 'dependency',
        },
        'heartbeat failed',
      );
    } finally {
      beating = undefined;
    }
    const durationMs = now() - ts;
    // Texts are handed over only when the turn succeeded; a failed beat leaves them for the next one.
    if (status === 'ok' && carried.length > 0) {
      const delivered = new Set(carried);
      queue = queue.filter((item) => !delivered.has(item));
    }
    const id = randomId();
    write(() =>
      db.batch(
        beatStatements({
          id,
          ts,
          agentId: current.agentId,
          sources,
          status,
          durationMs,
          queuedTexts: carried.length,
          summary,
          error,
          delivered: status === 'ok' ? carried.map((item) => item.seq) : [],
          shared: singleton !== undefined,
        }),
      ),
    );
    events.emit('heartbeat:beat', {
      agentId: current.agentId,
      status,
      sources: sources.length,
      queuedTexts: carried.length,
      durationMs,
      timestamp: ts,
    });
  }

  const ensureStarted = () => {
    if (closed) throw new CronWakegateError('CLOSED', 'the heartbeat service is closed');
    if (!started) throw new CronWakegateError('CLOSED', 'the heartbeat service is not started');
  };

  const status = (): HeartbeatStatus =>
    statusOf(settings, { queued: queue.length, running: coalescer.busy, lastBeatAt, nextBeatAt });

  const configure = (input: unknown) => {
    settings = parse(input);
    coalescer.windowMs = settings.coalesceWindowMs;
    arm();
  };

  return {
    async start() {
      if (closed) throw new CronWakegateError('CLOSED', 'the heartbeat service is closed');
      if (started) return;
      refuseUncoordinated(db, options.coordinator, 'heartbeat service');
      await db.migrate(MIGRATION_PACKAGE, cronWakegateMigrationSet);
      const last = await db.get<{ ts: number | null }>('SELECT MAX(ts) AS ts FROM heartbeat_beats');
      lastBeatAt = last?.ts ?? undefined;
      queue = await db.query<QueuedText>('SELECT seq, ts, text FROM heartbeat_queue ORDER BY seq');
      nextSeq = (queue[queue.length - 1]?.seq ?? 0) + 1;
      started = true;
      if (singleton !== undefined) {
        renewTimer = setInterval(() => void holdSingleton(), renewMs);
        renewTimer.unref?.();
      }
      if (settings.enabled && lastBeatAt !== undefined && lastBeatAt + settings.intervalMs <= now()) {
        // The beats that fell due while the daemon was down run once, now; the beat re-arms the timer.
        periodic('catch-up');
      } else {
        // With no beat on record the first one comes an interval after start, not at once.
        arm();
      }
    },
    status() {
      ensureStarted();
      return status();
    },
    async history(query = {}) {
      ensureStarted();
      const limit = Math.min(Math.max(query.limit ?? 50, 1), 1000);
      await writes;
      return readHistory(db, limit);
    },
    trigger(reason) {
      ensureStarted();
      const { coalesced } = coalescer.request(reason ? `trigger:${reason.slice(0, 64)}` : 'trigger');
      return { triggered: true, coalesced };
    },
    wake(source, text) {
      ensureStarted();
      if (text !== undefined && text.length > 0) enqueue(text);
      const { coalesced } = coalescer.request(source.slice(0, 64));
      return { queued: true, coalesced };
    },
    wakeNow(text) {
      if (closed || !started) return;
      if (text !== undefined && text.length > 0) enqueue(text);
      coalescer.request('webhook');
    },
    queueForNextBeat(text) {
      if (closed || !started) return;
      enqueue(text);
    },
    async update(patch) {
      ensureStarted();
      const checked = checkFields(patch, heartbeatUpdateSchema);
      const next = parse({ ...settings, ...checked });
      await options.persistSettings?.(checked, next);
      configure(next);
      return status();
    },
    configure,
    async idle() {
      await coalescer.idle();
      await writes;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      if (renewTimer) clearInterval(renewTimer);
      await singleton?.release().catch(() => undefined);
      beating?.abort(new Error('shutdown'));
      await coalescer.close();
      await writes;
    },
  };
}

/** Runs the beat's model turn under the section's time limit; `controller` aborts it. */
function runBeatTurn(
  runner: AgentTurnRunner,
  current: HeartbeatSection,
  message: string,
  controller: AbortController,
): Promise<{ response: string }> {
  return new Promise<{ response: string }>((resolve, reject) => {
    const limit = setTimeout(() => {
      const timeout = new Error(`beat timed out after ${current.timeoutMs} ms`);
      controller.abort(timeout);
      reject(timeout);
    }, current.timeoutMs);
    limit.unref?.();
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    runner
      .runTurn({
        agentId: current.agentId,
        message,
        sessionKey: `heartbeat:${current.agentId}`,
        timeoutMs: current.timeoutMs,
        signal: controller.signal,
        origin: 'heartbeat',
      })
      .then(resolve, reject)
      .finally(() => clearTimeout(limit));
  });
}

/** The statements that record a beat, and drop the queued texts it delivered (up to seq `delivered`). */
function beatStatements(beat: HeartbeatBeat & { delivered: number[]; shared: boolean }): Statement[] {
  const last = beat.delivered[beat.delivered.length - 1];
  return [
    {
      sql: `INSERT INTO heartbeat_beats (id, ts, agent_id, sources, status, duration_ms, queued_texts, summary, error)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        beat.id,
        beat.ts,
        beat.agentId,
        JSON.stringify(beat.sources),
        beat.status,
        beat.durationMs,
        beat.queuedTexts,
        beat.summary ?? null,
        beat.error ?? null,
      ],
    },
    // In process every older text was delivered; a shared queue may hold other instances' newer ones.
    ...(last === undefined
      ? []
      : beat.shared
        ? beat.delivered.map((seq) => ({ sql: 'DELETE FROM heartbeat_queue WHERE seq = ?', args: [seq] }))
        : [{ sql: 'DELETE FROM heartbeat_queue WHERE seq <= ?', args: [last] }]),
  ];
}

interface BeatRow {
  id: string;
  ts: number;
  agent_id: string;
  sources: string;
  status: 'ok' | 'error';
  duration_ms: number;
  queued_texts: number;
  summary: string | null;
  error: string | null;
}

/** The newest `limit` beats, newest first. */
async function readHistory(db: Database, limit: number): Promise<HeartbeatBeat[]> {
  const tie = db.dialect === 'pg' ? 'id' : 'rowid';
  const rows = await db.query<BeatRow>(
    `SELECT * FROM heartbeat_beats ORDER BY ts DESC, ${tie} DESC LIMIT ?`,
    [limit],
  );
  return rows.map(toBeat);
}

function statusOf(
  settings: HeartbeatSection,
  state: { queued: number; running: boolean; lastBeatAt: number | undefined; nextBeatAt: number | undefined },
): HeartbeatStatus {
  const { lastBeatAt, nextBeatAt } = state;
  return {
    enabled: settings.enabled,
    intervalMs: settings.intervalMs,
    agentId: settings.agentId,
    prompt: settings.prompt,
    queued: state.queued,
    running: state.running,
    ...(lastBeatAt === undefined ? {} : { lastBeatAt }),
    ...(nextBeatAt === undefined ? {} : { nextBeatAt }),
  };
}

function toBeat(row: BeatRow): HeartbeatBeat {
  const entry: HeartbeatBeat = {
    id: row.id,
    ts: row.ts,
    agentId: row.agent_id,
    sources: JSON.parse(row.sources) as string[],
    status: row.status,
    durationMs: row.duration_ms,
    queuedTexts: row.queued_texts,
  };
  if (row.summary !== null) entry.summary = row.summary;
  if (row.error !== null) entry.error = row.error;
  return entry;
}
