import type { IncomingMessage, ServerResponse } from 'node:http';
import { resolveSecretRefs } from '@agentd/config-store';
import type { AgentdLogger } from '@agentd/logging';
import type { Database } from '@agentd/storage';
import {
  type AgentTurnRunner,
  createQueueDrainer,
  createWebhookHandler,
  createWebhookStore,
  deliverPendingWakes,
  type HookResponseDeliverer,
  MIN_TOKEN_LENGTH,
  normalizeHookPath,
  type QueueDrainer,
  type WakeTarget,
  type WebhookHandler,
  type WebhookStore,
  type WebhooksSection,
  webhookMigrations,
} from '@agentd/webhooks-hmac';
import { type SecurityAudit, webhookAuditEvent } from '@agentd/evidence';

/** What the daemon gives the webhook module. */
export interface DaemonHooksOptions {
  db: Database;
  /** The `webhooks` module logger. */
  logger: AgentdLogger;
  /** For `${secret:NAME}` references in `webhooks.token`. */
  env: NodeJS.ProcessEnv;
  now: () => number;
  section: WebhooksSection;
  /** Drains the agent queue when present; without it accepted turns wait in libsql. */
  agentTurnRunner?: AgentTurnRunner | undefined;
  /** The heartbeat; without it wakes wait in libsql for the heartbeat to consume. */
  wakeTarget?: WakeTarget | undefined;
  /** Channel delivery for mappings with `deliver: true`. */
  deliver?: HookResponseDeliverer | undefined;
  /** Producer of webhook `audit:event`s (signature verdicts, refusals). @default emits nothing */
  audit?: SecurityAudit | undefined;
}

/** The `/hooks` endpoints and their durable queue, as the daemon runs them. */
export interface DaemonHooks {
  /** True when `path` is under the enabled base path (a disabled section claims nothing, so it answers 404). */
  matches(path: string): boolean;
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** Applies a new `webhooks` section (hot: no restart needed). */
  configure(section: WebhooksSection): Promise<void>;
  readonly store: WebhookStore;
  close(): Promise<void>;
}

const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Migrates the webhook tables, opens the store, starts the queue drainer when a turn
 * runner exists, hands stored wakes to a wake target when one exists, and builds the
 * handler from the `webhooks` section.
 */
export async function startHooks(options: DaemonHooksOptions): Promise<DaemonHooks> {
  const { db, logger, env, now, agentTurnRunner, wakeTarget, deliver, audit } = options;
  await db.migrate('@agentd/webhooks-hmac', [...webhookMigrations]);
  const store = createWebhookStore({ db, logger, now });
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
  const pruneTimer = setInterval(() => void prune(), PRUNE_INTERVAL_MS);
  pruneTimer.unref();

  let drainer: QueueDrainer | undefined;
  if (agentTurnRunner) {
    drainer = createQueueDrainer({
      store,
      runner: agentTurnRunner,
      logger,
      now,
      ...(deliver ? { deliver } : {}),
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

  const build = async (section: WebhooksSection): Promise<void> => {
    enabled = section.enabled;
    basePath = section.path;
    let secrets: string[] = [];
    try {
      const resolved = await resolveSecretRefs(
        { token: section.token, previousTokens: section.previousTokens },
        (name) => env[name],
      );
      secrets = [resolved.token, ...resolved.previousTokens.map((entry) => entry.token)].filter(
        (value): value is string => !!value,
      );
      if (secrets.some((secret) => secret.length < MIN_TOKEN_LENGTH)) {
        throw new Error(`a resolved webhook token is shorter than ${MIN_TOKEN_LENGTH} characters`);
      }
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
    const verifying = secrets.length > 0;
    // Paths whose unsigned acceptance is already in the audit (reset with each configuration).
    const unsignedAudited = new Set<string>();
    const firstUnsigned = (path: string) => !unsignedAudited.has(path) && !!unsignedAudited.add(path);
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
        if (!audit) return;
        const event = webhookAuditEvent(outcome, verifying, firstUnsigned);
        if (event) audit.emit(event);
      },
      onWebhook: async (event) => {
        const plan = event.plan;
        // Wakes are always stored first: if the live heartbeat call fails, the heartbeat still finds them.
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

  await build(options.section);

  return {
    store,
    matches(path) {
      return enabled && (path === basePath || path.startsWith(`${basePath}/`));
    },
    async handle(request, response) {
      if (!handler) {
        request.resume();
        const body = JSON.stringify({ error: 'Webhook configuration error' });
        response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(body);
        logger.error(
          { reason: misconfigured, hint: 'fix webhooks.token and reload the config', errorKind: 'config' },
          'webhook refused: configuration error',
        );
        // Refusing to serve unverified hooks is a security decision; the message (which may name
        // the secret reference) stays in the log, the row gets a closed reason.
        audit?.emit({
          kind: 'webhook',
          classification: 'denied',
          outcome: 'failure',
          severity: 'low',
          reason: 'secret_unusable',
          path: normalizeHookPath(((request.url ?? '').split('?', 1)[0] ?? '').slice(basePath.length)),
          status: 500,
        });
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
          response
            .writeHead(500, { 'content-type': 'application/json; charset=utf-8' })
            .end('{"error":"Internal error"}');
        } else response.destroy();
      }
    },
    configure: build,
    async close() {
      clearInterval(pruneTimer);
      await drainer?.stop();
      await store.close();
    },
  };
}
