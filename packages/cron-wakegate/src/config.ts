import { z } from 'zod';
import { MAX_GATE_OUTPUT_BYTES, MAX_GATE_TIMEOUT_MS } from './wake-gate.js';

/** Retry backoff of a failing job: the n-th consecutive error waits the n-th entry (the last repeats). */
export const DEFAULT_RETRY_BACKOFF_MS = [30_000, 60_000, 300_000, 900_000, 3_600_000];

/** The prompt a heartbeat sends when none is configured. */
export const DEFAULT_HEARTBEAT_PROMPT =
  'Heartbeat. Look at what needs your attention now: queued events below, pending tasks, ' +
  'anything you promised to follow up. Act on what matters; if nothing does, reply HEARTBEAT_OK.';

/** The `wakeGate` part of the `cron` section: defaults every gate runs under unless it sets its own. */
export const wakeGateDefaultsSchema = z
  .object({
    /**
     * Time limit of a gate, in milliseconds.
     * @default 10000
     */
    timeoutMs: z.number().int().min(100).max(MAX_GATE_TIMEOUT_MS).default(10_000),
    /**
     * Output cap of a gate (stdout and stderr together), in bytes.
     * @default 65536
     */
    maxOutputBytes: z.number().int().min(64).max(MAX_GATE_OUTPUT_BYTES).default(65_536),
    /**
     * PATH a gate runs with.
     * @default the daemon's PATH
     */
    path: z.string().min(1).max(4096).optional(),
  })
  .strict();

/** The `cron` section of the agentd config file. */
export const cronSectionSchema = z
  .object({
    /**
     * Runs scheduled fires; `false` keeps jobs stored and editable but never fires them
     * (`cron.run` still works).
     * @default true
     */
    enabled: z.boolean().default(true),
    /**
     * Jobs running at once across the daemon; further fires wait their turn.
     * @default 4
     */
    maxConcurrentRuns: z.number().int().min(1).max(10_000).default(4),
    /**
     * Time limit of one run (gate excluded) when a job sets none, in milliseconds.
     * @default 600000
     */
    runTimeoutMs: z.number().int().min(1000).max(86_400_000).default(600_000),
    /**
     * Extra wait after consecutive errors; see {@link DEFAULT_RETRY_BACKOFF_MS}.
     * @default [30000, 60000, 300000, 900000, 3600000]
     */
    retryBackoffMs: z
      .array(z.number().int().min(0).max(86_400_000))
      .min(1)
      .max(20)
      .default(DEFAULT_RETRY_BACKOFF_MS),
    /**
     * Retries of a failing one-shot job before it is disabled.
     * @default 3
     */
    onceMaxRetries: z.number().int().min(0).max(100).default(3),
    /**
     * Days run records are kept; 0 keeps them forever.
     * @default 30
     */
    runRetentionDays: z.number().int().min(0).max(3650).default(30),
    /**
     * Zone of a cron job that names none.
     * @default the host's time zone
     */
    defaultTimeZone: z.string().min(1).max(64).optional(),
    /** Defaults for wake-gates. */
    wakeGate: wakeGateDefaultsSchema.default(wakeGateDefaultsSchema.parse({})),
  })
  .strict();

/** The parsed `cron` section. */
export type CronSection = z.output<typeof cronSectionSchema>;

const heartbeatEnabled = z.boolean();
const heartbeatIntervalMs = z
  .number()
  .int()
  .min(1000)
  .max(7 * 86_400_000);
const heartbeatPrompt = z.string().min(1).max(16_000);
const heartbeatAgentId = z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/);

/**
 * The fields `heartbeat.update` may change, every one optional and without defaults, so an
 * update touches only what it names.
 */
export const heartbeatUpdateSchema = z
  .object({
    enabled: heartbeatEnabled.optional(),
    intervalMs: heartbeatIntervalMs.optional(),
    prompt: heartbeatPrompt.optional(),
    agentId: heartbeatAgentId.optional(),
  })
  .strict();

/** The `heartbeat` section: the periodic agent wake. Applies at once when changed. */
export const heartbeatSectionSchema = z
  .object({
    /**
     * Periodic beats on or off; wakes (`wakeNow`, `heartbeat.trigger`, `scheduler.wake`) run either way.
     * @default false
     */
    enabled: heartbeatEnabled.default(false),
    /**
     * Time between beats, in milliseconds.
     * @default 1800000
     */
    intervalMs: z
      .number()
      .int()
      .min(1000)
      .max(7 * 86_400_000)
      .default(1_800_000),
    /**
     * The message each beat sends; queued wake texts are appended.
     * @default {@link DEFAULT_HEARTBEAT_PROMPT}
     */
    prompt: heartbeatPrompt.default(DEFAULT_HEARTBEAT_PROMPT),
    /**
     * The agent that is woken.
     * @default 'default'
     */
    agentId: heartbeatAgentId.default('default'),
    /**
     * Time limit of one beat's turn, in milliseconds.
     * @default 300000
     */
    timeoutMs: z.number().int().min(1000).max(86_400_000).default(300_000),
    /**
     * Wake requests within this window collapse into one beat, in milliseconds.
     * @default 250
     */
    coalesceWindowMs: z.number().int().min(0).max(60_000).default(250),
    /**
     * Wake texts kept for the next beat; the oldest are dropped beyond it.
     * @default 100
     */
    maxQueuedTexts: z.number().int().min(1).max(10_000).default(100),
  })
  .strict();

/** The parsed `heartbeat` section. */
export type HeartbeatSection = z.output<typeof heartbeatSectionSchema>;
