import { randomUUID } from 'node:crypto';
import type { AgentTurnRunner } from '@agentd/contracts';
import type {
  ChannelAdapter,
  FetchedMessage,
  InboundMessage,
  InboundReaction,
  OutboundOperation,
  WebhookRequest,
  WebhookResponse,
} from './adapter.js';
import { createWhatsAppAdapter } from './adapters/whatsapp.js';
import { createWebchatAdapter } from './adapters/webchat.js';
import {
  type ChannelsSection,
  channelsSectionSchema,
  hasCredentials,
  inboundAgent,
  isConfigured,
  type NotificationsSection,
  PLATFORMS,
  type Platform,
  takesInbound,
} from './config.js';
import {
  type AttemptOutcome,
  createDeliveryQueue,
  type EnqueueRequest,
  type StageCounts,
} from './delivery-queue.js';
import { ChannelsError } from './errors.js';
import type { LaneCoordinator } from './internal/cluster-lanes.js';
import { type RateShare, shareRateLimits } from './internal/rate-share.js';
import { type ConnectorGate, holdConnector } from './internal/connector-gate.js';
import { formatFor } from './internal/format.js';
import { isAllowed } from './internal/inbound.js';
import { createOwnedInboundStore } from './internal/inbound-owned.js';
import { createInboundStore, INBOUND_TABLE } from './internal/inbound-store.js';
import { createInboundTurns } from './internal/inbound-turns.js';
import {
  type ChannelsDatabase,
  type DeliveryEntry,
  type DeliveryStage,
  QUEUE_TABLE,
  storableText,
  WEBCHAT_SENT,
} from './internal/queue-store.js';
import { messageLimit, splitMessage } from './internal/split.js';
import { createWebchatRelay } from './internal/webchat-relay.js';
import { type ChannelsLogger, noopLogger } from './logger.js';

/** Builds the adapter of a configured platform (tests and embedders may replace one). */
export type AdapterFactory = (
  section: ChannelsSection,
  context: { logger: ChannelsLogger; now: () => number },
) => ChannelAdapter | Promise<ChannelAdapter>;

/**
 * What the SDK-backed adapters take alike from their platform's section and the service: the
 * API root, whether inbound runs (when the section names an agent or `allowFrom` admits
 * someone) and the clock.
 */
function common(
  platform: { apiBaseUrl?: string | undefined; agentId?: string | undefined; allowFrom: string[] },
  context: { now: () => number },
) {
  return { apiBaseUrl: platform.apiBaseUrl, inbound: takesInbound(platform), now: context.now };
}

/**
 * The adapters the package ships, by platform. The SDK-backed ones are imported when a platform
 * is first configured: a daemon without Telegram, Discord or Slack never loads grammy,
 * `@discordjs/*` or `@slack/web-api` (together some 23 MB resident).
 */
export const defaultAdapterFactories: Partial<Record<Platform, AdapterFactory>> = {
  telegram: async ({ telegram }, context) =>
    (await import('./adapters/telegram.js')).createTelegramAdapter({
      ...common(telegram, context),
      botToken: telegram.botToken ?? '',
      mode: telegram.mode,
      webhookUrl: telegram.webhookUrl,
      webhookSecret: telegram.webhookSecret,
      logger: context.logger,
    }),
  discord: async ({ discord }, context) =>
    (await import('./adapters/discord.js')).createDiscordAdapter({
      ...common(discord, context),
      botToken: discord.botToken ?? '',
      gatewayUrl: discord.gatewayUrl,
    }),
  slack: async ({ slack }, context) =>
    (await import('./adapters/slack.js')).createSlackAdapter({
      ...common(slack, context),
      botToken: slack.botToken ?? '',
      signingSecret: slack.signingSecret,
      socketMode: slack.socketMode,
      appToken: slack.appToken,
      logger: context.logger,
    }),
  whatsapp: ({ whatsapp }, context) =>
    createWhatsAppAdapter({
      accessToken: whatsapp.accessToken ?? '',
      phoneNumberId: whatsapp.phoneNumberId ?? '',
      appSecret: whatsapp.appSecret,
      verifyToken: whatsapp.verifyToken,
      apiBaseUrl: whatsapp.apiBaseUrl,
      now: context.now,
    }),
};

/** Options of {@link createChannelsService}. */
export interface ChannelsServiceOptions {
  db: ChannelsDatabase;
  /** The `channels` section with its secret references already resolved. */
  section: ChannelsSection;
  notifications?: NotificationsSection;
  /** Runs the agent turns of inbound messages; without one inbound messages are only logged. */
  runner?: AgentTurnRunner;
  /**
   * How long `close` waits for inbound turns still running to end and queue their answers; a
   * turn cut off runs again at the next start. @default 10000
   */
  shutdownGraceMs?: number;
  /** Where inbound goes on a platform that names no `agentId`. @default 'default' */
  defaultAgentId?: string;
  /** Where a refused inbound sender is reported (audit). */
  onRefused?(message: Pick<InboundMessage, 'channelType' | 'channelId' | 'userId'>): void;
  /** Every delivery attempt (traces, channel activity). */
  onAttempt?(outcome: AttemptOutcome): void;
  /** Every inbound message admitted (channel activity). */
  onInbound?(message: InboundMessage): void;
  /** Every reaction from an admitted sender (the learning layer's `reaction` outcome source). */
  onReaction?(reaction: InboundReaction): void;
  factories?: Partial<Record<Platform, AdapterFactory>>;
  /** How long a method waits for its delivery to settle before answering `queued`. @default 10000 */
  settleTimeoutMs?: number;
  /** Pause before an entry is tried again after the database refused its claim. @default 1000 */
  pollMs?: number;
  /**
   * Cluster mode: connectors that only one instance per account may run (`exclusive` adapters:
   * Telegram polling, the Discord gateway, Slack Socket Mode) run on the instance holding the
   * singleton `channels:<platform>` of this coordinator. On PostgreSQL (`mode` `postgres`) each
   * chat's delivery lane is worked by the instance holding its lease, and webchat notifications
   * reach sockets on any instance through its bus; inbound messages are owned by the instance
   * running their turn, and only a dead instance's are taken over. @default everything runs here
   */
  coordinator?: LaneCoordinator | undefined;
  /** How long a webchat delivery waits for another instance to say it reached the client. @default 2000 */
  webchatAckMs?: number;
  /**
   * How often a connector singleton or a lane lease is taken or renewed; under a third of the
   * lease. Cluster mode: also how often the inbound journal's leases are renewed (each lasts
   * three times this) and a dead instance's inbound messages are taken over. @default 3000
   */
  connectorRenewMs?: number;
  /**
   * Cluster mode: where inbound turns run. A message whose agent `runsHere` answers false for
   * (its home is another instance) is journalled unheld instead of run, and only instances whose
   * `claimWhere` (an SQL condition on the journal's `agent_id`) matches it claim it: the home does,
   * within `connectorRenewMs`. Without it every instance runs every agent.
   */
  inboundPlacement?: {
    runsHere(agentId: string): Promise<boolean>;
    claimWhere?: { sql: string; args: readonly string[] } | undefined;
  };
  now?: () => number;
  logger?: ChannelsLogger;
}

/** A channel as `channels.list` shows it. */
export interface ChannelListing {
  type: string;
  /** `unconfigured`, `disabled`, or the adapter's health state. */
  status: string;
  inbound: boolean;
}

/** What the message methods answer. */
export interface DeliveryAnswer {
  messageId: string | null;
  deliveryId: string;
  status: DeliveryStage;
  error?: string;
  /** A text longer than the platform takes went as these messages, in order (the first is the answer's own). */
  parts?: Array<Omit<DeliveryAnswer, 'parts'>>;
}

/** The channels of a daemon: adapters per configured platform, webchat, the queue. */
export interface ChannelsService {
  start(): Promise<void>;
  /** Applies a changed `channels` / `notifications` section live (adapters rebuilt where it changed). */
  apply(section: ChannelsSection, notifications?: NotificationsSection): Promise<void>;
  /** Connects webchat to the WebSocket clients. */
  attachWebchat(notify: (clientId: string, method: string, params: unknown) => number): void;
  deliver(
    channelType: string,
    operation: OutboundOperation,
    request?: { idempotencyKey?: string | undefined; rootRunId?: string | undefined },
  ): Promise<DeliveryAnswer>;
  fetch(channelType: string, channelId: string, limit: number): Promise<FetchedMessage[]>;
  action(platform: Platform, params: { action: string } & Record<string, unknown>): Promise<unknown>;
  notify(message: string, priority: 'low' | 'normal' | 'high'): Promise<DeliveryAnswer>;
  list(): ChannelListing[];
  status(channelType?: string): Promise<Array<ChannelListing & { health: object; queue: StageCounts }>>;
  queueStatus(channelType?: string): Promise<StageCounts>;
  /**
   * An inbound platform callback (`/channels/<platform>/…`): 404 for a platform that is not
   * configured or takes no callbacks.
   */
  webhook(platform: string, request: WebhookRequest): Promise<WebhookResponse>;
  /** Inbound senders refused by `allowFrom` since start, per channel type. */
  refusedCount(channelType: string): number;
  close(): Promise<void>;
}

/** Creates the channels service. Nothing is sent or polled until {@link ChannelsService.start}. */
export function createChannelsService(options: ChannelsServiceOptions): ChannelsService {
  const logger = options.logger ?? noopLogger;
  const now = options.now ?? Date.now;
  const defaultAgentId = options.defaultAgentId ?? 'default';
  const factories = { ...defaultAdapterFactories, ...options.factories };
  let section = channelsSectionSchema.parse(options.section);
  let notifications = options.notifications ?? {};
  const adapters = new Map<string, { adapter: ChannelAdapter; key: string }>();
  const gates = new Map<ChannelAdapter, ConnectorGate>();
  const refused = new Map<string, number>();
  let started = false;

  const clustered = options.coordinator?.mode === 'postgres' ? options.coordinator : undefined;
  let localWebchat: ((clientId: string, method: string, params: unknown) => number) | undefined;
  const relay = clustered
    ? createWebchatRelay({
        bus: clustered.bus,
        instanceId: clustered.instanceId,
        local: (clientId, method, params) => localWebchat?.(clientId, method, params) ?? 0,
        ackTimeoutMs: options.webchatAckMs ?? 2000,
      })
    : undefined;
  const webchat = createWebchatAdapter({
    history: async (clientId, limit) => webchatHistory(options.db, clientId, limit),
    ...(relay ? { relay: relay.notify } : {}),
  });
  const adapterOf = (channelType: string): ChannelAdapter => {
    if (channelType === 'webchat') return webchat;
    if (!(PLATFORMS as readonly string[]).includes(channelType))
      throw new ChannelsError('UNKNOWN_CHANNEL', `Unknown channel type: ${channelType}`, {
        data: { channelType },
      });
    const found = adapters.get(channelType);
    if (!found)
      throw new ChannelsError(
        'UNCONFIGURED',
        `${channelType} is not configured: set channels.${channelType}.enabled and its credentials`,
        { data: { channelType } },
      );
    return found.adapter;
  };

  const queue = createDeliveryQueue({
    db: options.db,
    deliver: (channelType, operation, attempt) => adapterOf(channelType).deliver(operation, attempt),
    reconcile: async (channelType, operation, attempt) => {
      const adapter = adapterOf(channelType);
      return adapter.reconcile ? adapter.reconcile(operation, attempt) : undefined;
    },
    ...section.delivery,
    ...(options.pollMs !== undefined ? { pollMs: options.pollMs } : {}),
    ...(options.onAttempt ? { onAttempt: options.onAttempt } : {}),
    ...(clustered ? { cluster: { coordinator: clustered, renewMs: options.connectorRenewMs ?? 3000 } } : {}),
    now,
    logger,
  });

  /**
   * What is queued for an operation: a `send` (and an `edit`) in the platform's markup
   * (`formatFor`); a `send` longer than the platform takes as ordered parts, each its own
   * delivery keyed `<key>#<index>`. Short plain text is handed on as it came (one length check).
   */
  const prepare = (request: EnqueueRequest): EnqueueRequest | EnqueueRequest[] => {
    const { operation } = request;
    if (operation.op !== 'send' && operation.op !== 'edit') return request;
    const text = formatFor(request.channelType, operation.text);
    const parts = operation.op === 'send' ? splitMessage(text, messageLimit(request.channelType)) : [text];
    if (parts.length === 1)
      return text === operation.text ? request : { ...request, operation: { ...operation, text } };
    // Parts are keyed `<key>#<index>` (a fresh base when the caller gave no key), which also
    // lets the queue keep their order across a restart.
    const key = request.idempotencyKey ?? `split:${randomUUID()}`;
    return parts.map((part, index) => ({
      ...request,
      idempotencyKey: `${key}#${index}`,
      operation: { ...operation, text: part },
    }));
  };
  /** Queues what {@link prepare} makes of a request (the inbound replies go this way too). */
  const enqueue = (request: EnqueueRequest) => {
    const prepared = prepare(request);
    return Array.isArray(prepared) ? queue.enqueueAll(prepared) : queue.enqueue(prepared);
  };

  const renewMs = options.connectorRenewMs ?? 3000;
  let rateShare: RateShare | undefined;
  const turns = createInboundTurns({
    // Owned rows live beside the coordinator's tables: in the cluster's PostgreSQL database.
    store:
      clustered && options.db.dialect === 'pg'
        ? createOwnedInboundStore({
            db: options.db,
            // A lease of three renewals: with the renewal at a third of the cluster's lease, the same lease.
            rows: clustered.ownedRows({
              table: INBOUND_TABLE,
              idColumn: 'inbound_key',
              leaseMs: renewMs * 3,
            }),
            instanceId: clustered.instanceId,
            leaseMs: renewMs * 3,
            renewMs,
            claimWhere: options.inboundPlacement?.claimWhere,
            now,
          })
        : createInboundStore(options.db, now),
    runner: () => options.runner,
    enqueue,
    logger,
    runsHere: clustered && options.db.dialect === 'pg' ? options.inboundPlacement?.runsHere : undefined,
  });

  const onInbound = (platform: Platform) => (message: InboundMessage) => {
    const platformSection = section[platform];
    if (!isAllowed(platformSection.allowFrom, message.userId)) {
      refused.set(platform, (refused.get(platform) ?? 0) + 1);
      logger.info({ channelType: platform, channelId: message.channelId }, 'inbound sender not in allowFrom');
      options.onRefused?.({ channelType: platform, channelId: message.channelId, userId: message.userId });
      return;
    }
    options.onInbound?.(message);
    const agentId = inboundAgent(platformSection, defaultAgentId);
    if (!agentId || !options.runner) return;
    // Resolves once the message is journalled: only then is the platform told it arrived.
    return turns.admit(message, agentId);
  };

  const onReaction = (platform: Platform) => (reaction: InboundReaction) => {
    if (isAllowed(section[platform].allowFrom, reaction.userId)) options.onReaction?.(reaction);
  };

  /** Starts an adapter, saying where its inbound goes (an operator must not have to guess). */
  const startAdapter = async (platform: Platform, adapter: ChannelAdapter): Promise<void> => {
    const agentId = inboundAgent(section[platform], defaultAgentId);
    if (agentId === undefined)
      logger.info(
        { channelType: platform },
        `${platform} inbound off: allowFrom admits nobody (sending only)`,
      );
    else
      logger.info(
        { channelType: platform, agentId, allowFrom: section[platform].allowFrom.length },
        `${platform} inbound reaches agent ${agentId}${section[platform].agentId ? '' : ' (the default agent: no agentId set)'}`,
      );
    const start = () => adapter.start(onInbound(platform), onReaction(platform));
    if (!options.coordinator || !adapter.exclusive) return start();
    const gate = holdConnector({
      name: `channels:${platform}`,
      singleton: options.coordinator.singleton(`channels:${platform}`),
      renewMs: options.connectorRenewMs ?? 3000,
      start,
      stop: () => adapter.stop(),
      logger,
    });
    gates.set(adapter, gate);
    await gate.ready;
  };
  /** Stops an adapter's inbound, and gives its connector singleton up when it holds one. */
  const stopAdapter = async (adapter: ChannelAdapter): Promise<void> => {
    const gate = gates.get(adapter);
    gates.delete(adapter);
    await (gate ? gate.stop() : adapter.stop());
  };

  /** Stops adapters whose section changed or went away and starts the new ones. */
  const reconcileAdapters = async (): Promise<void> => {
    for (const platform of PLATFORMS) {
      const factory = factories[platform];
      const key = JSON.stringify(section[platform]);
      const current = adapters.get(platform);
      const wanted = factory !== undefined && isConfigured(platform, section);
      if (current && (!wanted || current.key !== key)) {
        adapters.delete(platform);
        await stopAdapter(current.adapter);
      }
      if (wanted && (!current || current.key !== key)) {
        const adapter = await factory(section, { logger, now });
        rateShare?.apply(adapter);
        adapters.set(platform, { adapter, key });
        if (started) await startAdapter(platform, adapter);
      }
    }
  };

  const answer = (entry: DeliveryEntry): DeliveryAnswer => ({
    messageId: entry.messageId ?? null,
    deliveryId: entry.deliveryId,
    status: entry.stage,
    ...(entry.stage === 'deadLetter' && entry.lastError ? { error: entry.lastError } : {}),
  });

  /** The entry's answer once it is `sent` or `deadLetter` (or its stage at the time-out). */
  const settle = async (entry: DeliveryEntry): Promise<DeliveryAnswer> =>
    entry.stage === 'sent' || entry.stage === 'deadLetter'
      ? answer(entry)
      : answer(await queue.settled(entry.deliveryId, options.settleTimeoutMs ?? 10_000));

  const service: ChannelsService = {
    async start() {
      rateShare ??= clustered
        ? shareRateLimits({
            coordinator: clustered,
            everyMs: renewMs,
            adapters: () => [...adapters.values()].map(({ adapter }) => adapter),
            logger,
          })
        : undefined;
      await reconcileAdapters();
      started = true;
      for (const [platform, { adapter }] of adapters) await startAdapter(platform as Platform, adapter);
      await queue.start();
      if (options.runner) await turns.resume();
    },
    async apply(next, nextNotifications) {
      section = channelsSectionSchema.parse(next);
      if (nextNotifications) notifications = nextNotifications;
      queue.configure(section.delivery);
      await reconcileAdapters();
    },
    attachWebchat(notify) {
      localWebchat = notify;
      webchat.attach(notify);
    },
    async deliver(channelType, operation, request = {}) {
      // Unknown and unconfigured platforms, and operations a platform lacks, are refused
      // before anything is written.
      const adapter = adapterOf(channelType);
      if (adapter.supports && !adapter.supports(operation.op))
        throw new ChannelsError('UNSUPPORTED', `${channelType} cannot ${operation.op} messages`, {
          data: { channelType },
        });
      const prepared = prepare({ channelType, operation, ...request });
      if (!Array.isArray(prepared)) {
        // The common case, kept to the two awaits it always had.
        const { entry } = await queue.enqueue(prepared);
        if (entry.stage === 'sent' || entry.stage === 'deadLetter') return answer(entry);
        return answer(await queue.settled(entry.deliveryId, options.settleTimeoutMs ?? 10_000));
      }
      const parts = await Promise.all((await queue.enqueueAll(prepared)).map(({ entry }) => settle(entry)));
      return { ...(parts[0] as DeliveryAnswer), parts };
    },
    async fetch(channelType, channelId, limit) {
      return adapterOf(channelType).fetch(channelId, limit);
    },
    async action(platform, params) {
      return adapterOf(platform).action(params);
    },
    async notify(message, priority) {
      const { channel, to } = notifications;
      if (!channel || !to)
        throw new ChannelsError(
          'UNCONFIGURED',
          'notifications are not configured: set notifications.channel and notifications.to',
        );
      const marker = priority === 'high' ? '[high] ' : priority === 'low' ? '[low] ' : '';
      return service.deliver(channel, { op: 'send', channelId: to, text: `${marker}${message}` });
    },
    list() {
      const listing: ChannelListing[] = [{ type: 'webchat', status: webchat.health().state, inbound: false }];
      for (const platform of PLATFORMS) {
        const found = adapters.get(platform);
        // Credentials without `enabled` is a platform switched off, not one never set up.
        const status = found
          ? found.adapter.health().state
          : !section[platform].enabled && hasCredentials(platform, section)
            ? 'disabled'
            : 'unconfigured';
        listing.push({ type: platform, status, inbound: Boolean(found && takesInbound(section[platform])) });
      }
      return listing;
    },
    async status(channelType) {
      if (
        channelType !== undefined &&
        channelType !== 'webchat' &&
        !(PLATFORMS as readonly string[]).includes(channelType)
      )
        throw new ChannelsError('UNKNOWN_CHANNEL', `Unknown channel type: ${channelType}`, {
          data: { channelType },
        });
      const rows = service.list().filter((row) => channelType === undefined || row.type === channelType);
      return Promise.all(
        rows.map(async (row) => ({
          ...row,
          health:
            row.type === 'webchat'
              ? webchat.health()
              : (adapters.get(row.type)?.adapter.health() ?? { state: row.status }),
          queue: await queue.counts(row.type),
          refused: refused.get(row.type) ?? 0,
        })),
      );
    },
    queueStatus: (channelType) => queue.counts(channelType),
    async webhook(platform, request) {
      const found = (PLATFORMS as readonly string[]).includes(platform) ? adapters.get(platform) : undefined;
      if (!found?.adapter.webhook) return { status: 404, body: 'not found' };
      return found.adapter.webhook(request);
    },
    refusedCount: (channelType) => refused.get(channelType) ?? 0,
    async close() {
      // Inbound stops first (what was taken is journalled), then the turns running get their
      // grace to queue their answers, then the queue closes.
      // The adapters keep sending (their stop ends inbound only) until the queue has closed.
      for (const { adapter } of adapters.values()) await stopAdapter(adapter);
      await turns.drain(options.shutdownGraceMs ?? 10_000);
      await queue.close();
      rateShare?.stop();
      rateShare = undefined;
      adapters.clear();
      relay?.close();
      await webchat.stop();
    },
  };
  return service;
}

/** What webchat clients were sent, newest first, read from the queue's own rows. */
async function webchatHistory(
  db: ChannelsDatabase,
  clientId: string,
  limit: number,
): Promise<FetchedMessage[]> {
  const { rows } = await db.execute(
    `SELECT delivery_id, message_id, operation, updated_at FROM ${QUEUE_TABLE}
      WHERE ${WEBCHAT_SENT} AND channel_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT ?`,
    [storableText(clientId), limit],
  );
  return rows.flatMap((row) => {
    const operation = JSON.parse(String(row.operation)) as OutboundOperation;
    if (operation.op !== 'send') return [];
    return [
      {
        messageId: String(row.message_id ?? row.delivery_id),
        text: operation.text,
        ts: Number(row.updated_at),
      },
    ];
  });
}
