import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventSink, SpanSink } from '@agentd/contracts';
import type { WebhooksSection } from './config.js';
import { MIN_TOKEN_LENGTH } from './config.js';
import { createWebhookHandler, type WebhookHandler, type WebhookOutcome } from './handler.js';
import { noopLogger, type WebhookLogger } from './logger.js';
import { normalizeHookPath } from './mapping.js';
import {
  type AgentTurnRunner,
  createQueueDrainer,
  type HookResponseDeliverer,
  type QueueDrainer,
} from './queue-drainer.js';
import type { ClaimWhere } from './internal/job-claims.js';
import { createWebhookStore, type WebhookDatabase, type WebhookStore } from './store.js';
import { type WebhookMigrationSet, webhookMigrationSet } from './migrations.js';
import { deliverPendingWakes, type WakeTarget } from './wake.js';
import { isCluster, type WebhookCoordinator } from './cluster.js';
import { WebhookError } from './errors.js';

/** A database that can also run migrations; `@agentd/storage`'s `Database` satisfies it. */
export interface WebhookServiceDatabase extends WebhookDatabase {
  migrate(packageName: string, migrations: WebhookMigrationSet): Promise<unknown>;
}

/** The token fields of a `webhooks` section, as {@link WebhookServiceOptions.resolveSecrets} sees them. */
export type WebhookSecretFields = Pick<WebhooksSection, 'token' | 'previousTokens'>;

/** What {@link WebhookServiceOptions.onOutcome} learns beside the outcome itself. */
export interface WebhookOutcomeContext {
  /** Whether signatures are checked on the configured section (a token is set). */
  verified: boolean;
  /**
   * True the first time it is asked about `path` since the section was (re)configured, so an
   * open endpoint can be reported once instead of once per request.
   */
  firstUnsigned(path: string): boolean;
}

/** A request refused because the section's token cannot be used (see {@link WebhookServiceOptions.onRefused}). */
export interface WebhookRefusal {
  /** The hook path under the base path, normalised. */
  path: string;
  /** Always `secret_unusable` today: the token reference did not resolve, or is too short. */
  reason: 'secret_unusable';
  status: 500;
}

/** Options of {@link createWebhookService}. */
export interface WebhookServiceOptions {
  /** The database; the service runs {@link webhookMigrationSet} on it (its dialect's list). */
  db: WebhookServiceDatabase;
  /** The `webhooks` section to serve; {@link WebhookService.configure} replaces it later. */
  section: WebhooksSection;
  /**
   * Resolves secret references (`${secret:NAME}`) in the token fields. A rejection marks the
   * section unusable: every hook path answers 500 until a usable section is configured.
   * @default the fields as they are
   */
  resolveSecrets?: (fields: WebhookSecretFields) => Promise<WebhookSecretFields>;
  /** Drains the agent queue when present; without it accepted turns wait in the database. */
  runner?: AgentTurnRunner | undefined;
  /** The heartbeat; without it wakes wait in the database for a later target. */
  wakeTarget?: WakeTarget | undefined;
  /** Channel delivery for mappings with `deliver: true`. */
  deliver?: HookResponseDeliverer | undefined;
  /** One call per handled request (after the store counted it). */
  onOutcome?: ((outcome: WebhookOutcome, context: WebhookOutcomeContext) => void) | undefined;
  /** Told `webhook:job_finished {outcome: completed|retry|failed, mapping}` after each agent job attempt. */
  events?: EventSink | undefined;
  /** Receives each agent job attempt as a `webhook.job` span. */
  spans?: SpanSink | undefined;
  /** One call per request refused because the section cannot be served safely. */
  onRefused?: ((refusal: WebhookRefusal) => void) | undefined;
  /** How often expired delivery ids and finished jobs are pruned. @default 3600000 (1 h) */
  pruneIntervalMs?: number;
  /**
   * The cluster coordinator (`@agentd/storage`'s `openCoordination` on the same database). In
   * `postgres` mode every instance's drainer shares the queue: each job is claimed by one
   * instance under a lease, taken over once when its owner stops renewing it, and an enqueue
   * wakes every drainer through the bus. Absent or `single`: the in-process queue.
   */
  coordinator?: WebhookCoordinator | undefined;
  /** The lease of a cluster claim. @default 10000 */
  jobLeaseMs?: number | undefined;
  /** Cluster mode: an extra condition on the jobs this instance claims (see the store's `claimWhere`). */
  claimWhere?: ClaimWhere | undefined;
  /** @default no-op */
  logger?: WebhookLogger;
  /** Clock in milliseconds. @default Date.now */
  now?: () => number;
}

/** The `/hooks` endpoints with their durable queue, drainer and stored wakes, as one service. */
export interface WebhookService {
  /** True when `path` is under the enabled base path (a disabled section claims nothing). */
  matches(path: string): boolean;
  /** Handles a node:http request completely (answers 500 while the section is unusable). */
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** Applies a new `webhooks` section in place (no restart needed). */
  configure(section: WebhooksSection): Promise<void>;
  readonly store: WebhookStore;
  /** Stops the prune timer and the drainer, then closes the store. */
  close(): Promise<void>;
}

const DEFAULT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Migrates the webhook tables, opens the store, prunes it now and hourly, starts the queue
 * drainer when a runner exists, hands stored wakes to the wake target when one exists, and
 * builds the handler from the section. Accepted wakes are stored first and then handed to the
 * target, so a failing heartbeat still finds them.
 */
export async function createWebhookService(options: WebhookServiceOptions): Promise<WebhookService> {
  const logger = options.logger ?? noopLogger;
  const now = options.now ?? Date.now;
  const { runner, wakeTarget, deliver } = options;
  const resolveSecrets = options.resolveSecrets ?? (async (fields: WebhookSecretFields) => fields);
  if (options.db.dialect === 'pg' && !isCluster(options.coordinator)) {
    // Every instance's drainer would claim with in-process SQL, which races on PostgreSQL.
    throw new WebhookError(
      'INVALID_OPTIONS',
      'the webhook service on PostgreSQL needs options.coordinator (openCoordination on the same database)',
    );
  }
  await options.db.migrate('@agentd/webhooks-hmac', webhookMigrationSet);
  const { coordinator } = options;
  const store = createWebhookStore({
    db: options.db,
    logger,
    now,
    ...(coordinator ? { coordinator } : {}),
    ...(options.jobLeaseMs !== undefined ? { jobLeaseMs: options.jobLeaseMs } : {}),
    ...(options.claimWhere !== undefined ? { claimWhere: options.claimWhere } : {}),
  });
  const prune = () =>
    store
      .prune()
      .catch((error: unknown) =>
        logger.warn(
          { err: error, hint: 'expired webhook ids are pruned again within the hour', errorKind: 'resource' },
          'pruning webhook tables failed',
        ),
      );
  await prune();
  const pruneTimer = setInterval(() => void prune(), options.pruneIntervalMs ?? DEFAULT_PRUNE_INTERVAL_MS);
  pruneTimer.unref();

  let drainer: QueueDrainer | undefined;
  if (runner) {
    drainer = createQueueDrainer({
      store,
      runner,
      logger,
      now,
      ...(deliver ? { deliver } : {}),
      ...(options.events ? { events: options.events } : {}),
      ...(options.spans ? { spans: options.spans } : {}),
      ...(coordinator ? { coordinator } : {}),
    });
    await drainer.start();
  }
  if (wakeTarget) {
    const handed = await deliverPendingWakes(store, wakeTarget);
    if (handed > 0) logger.info({ itemCount: handed }, 'stored webhook wakes handed to the heartbeat');
  }

  let enabled = false;
  let basePath = '/hooks';
  let handler: WebhookHandler | undefined;
  // Set when the section cannot be served safely (an unresolvable or short secret): every hook path answers 500.
  let misconfigured: string | undefined;

  const usableSecrets = async (section: WebhooksSection): Promise<string[]> => {
    const resolved = await resolveSecrets({ token: section.token, previousTokens: section.previousTokens });
    const secrets = [resolved.token, ...resolved.previousTokens.map((entry) => entry.token)].filter(
      (value): value is string => !!value,
    );
    if (secrets.some((secret) => secret.length < MIN_TOKEN_LENGTH)) {
      throw new Error(`a resolved webhook token is shorter than ${MIN_TOKEN_LENGTH} characters`);
    }
    return secrets;
  };

  const configure = async (section: WebhooksSection): Promise<void> => {
    enabled = section.enabled;
    basePath = section.path;
    let secrets: string[];
    try {
      secrets = await usableSecrets(section);
    } catch (error) {
      misconfigured = error instanceof Error ? error.message : 'webhook token cannot be resolved';
      handler = undefined;
      if (enabled) {
        logger.error(
          {
            err: error,
            hint: `set the secret named by webhooks.token to at least ${MIN_TOKEN_LENGTH} characters`,
            errorKind: 'config',
          },
          'webhooks disabled: the token cannot be used',
        );
      }
      return;
    }
    misconfigured = undefined;
    // Paths whose unsigned acceptance was already reported (reset with each configuration).
    const unsignedSeen = new Set<string>();
    const context: WebhookOutcomeContext = {
      verified: secrets.length > 0,
      firstUnsigned: (path) => !unsignedSeen.has(path) && !!unsignedSeen.add(path),
    };
    handler = createWebhookHandler({
      basePath: section.path,
      secret: secrets.length > 0 ? secrets : undefined,
      hmac: section.hmac,
      maxBodyBytes: section.maxBodyBytes,
      mappings: section.mappings,
      presets: enabled ? section.presets : [],
      logger,
      now,
      onOutcome: (outcome) => {
        store.recordOutcome(outcome);
        options.onOutcome?.(outcome, context);
      },
      onWebhook: async (event) => {
        const plan = event.plan;
        const accepted = await store.accept({
          endpoint: event.endpoint,
          mappingId: event.mapping.id,
          deliveryId: event.deliveryId,
          plan,
        });
        if (accepted.duplicate) return { duplicate: true };
        if (plan.action === 'agent') drainer?.kick();
        else if (wakeTarget && accepted.wakeId !== undefined) {
          if (plan.mode === 'now') wakeTarget.wakeNow(plan.text);
          else wakeTarget.queueForNextBeat(plan.text);
          await store.consumeWakes([accepted.wakeId]);
        }
        return { duplicate: false };
      },
    });
  };

  const refuse = (request: IncomingMessage, response: ServerResponse): void => {
    request.resume();
    response
      .writeHead(500, { 'content-type': JSON_TYPE })
      .end(JSON.stringify({ error: 'Webhook configuration error' }));
    logger.error(
      { reason: misconfigured, hint: 'fix webhooks.token and reload the config', errorKind: 'config' },
      'webhook refused: configuration error',
    );
    // The message (which may name the secret reference) stays in the log; the callback gets a closed reason.
    const path = ((request.url ?? '').split('?', 1)[0] ?? '').slice(basePath.length);
    options.onRefused?.({ path: normalizeHookPath(path), reason: 'secret_unusable', status: 500 });
  };

  await configure(options.section);

  return {
    store,
    matches: (path) => enabled && (path === basePath || path.startsWith(`${basePath}/`)),
    async handle(request, response) {
      if (!handler) {
        refuse(request, response);
        return;
      }
      try {
        await handler.node(request, response);
      } catch (error) {
        // The handler answers every request problem itself; this is a write on a broken socket or a bug.
        logger.error(
          { err: error, hint: 'see the error; the sender may retry', errorKind: 'internal' },
          'webhook handling failed',
        );
        if (!response.headersSent) {
          response.writeHead(500, { 'content-type': JSON_TYPE }).end('{"error":"Internal error"}');
        } else response.destroy();
      }
    },
    configure,
    async close() {
      clearInterval(pruneTimer);
      await drainer?.stop();
      await store.close();
    },
  };
}
