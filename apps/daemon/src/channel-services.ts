import { createHash } from 'node:crypto';
import {
  ChannelsError,
  type ChannelsService,
  type ChannelsServiceOptions,
  channelsMigrationSet,
  createChannelsService,
  resolvePlatformSecrets,
} from '@agentd/channels';
import { resolveSecretRefs } from '@agentd/config-store';
import { DEFAULT_AGENT_ID } from '@agentd/agent-runtime';
import type { AgentTurnRunner } from '@agentd/contracts';
import type { SecurityAudit } from '@agentd/evidence/audit';
import type { AgentdLogger } from '@agentd/logging';
import type { MediaServiceOptions } from '@agentd/media';
import type { ObsEvidence } from '@agentd/obs-reports';
import type { Coordinator, Database } from '@agentd/storage';
import type { HookResponseDeliverer } from '@agentd/webhooks-hmac';
import type { DaemonConfig } from './config-schema.js';
import type { channelReactions } from './learning-links.js';
import type { Lifecycle } from './lifecycle.js';
import type { ServiceContext } from './services.js';

/**
 * The `channels` section with its secret references resolved per platform: a platform whose
 * secret is missing is logged and left off, the others and the daemon start.
 */
export function resolveChannelSecrets(
  section: DaemonConfig['channels'],
  lookupSecret: (name: string) => Promise<string | undefined>,
  log: AgentdLogger,
): Promise<DaemonConfig['channels']> {
  return resolvePlatformSecrets(
    section,
    (value) => resolveSecretRefs(value, lookupSecret),
    (platform, err) =>
      log.error(
        {
          err,
          channelType: platform,
          errorKind: 'config',
          hint: `set the secret channels.${platform} references, then send SIGHUP`,
        },
        `${platform} left off: a secret reference could not be resolved`,
      ),
  );
}

/**
 * Delivers a webhook mapping's answer to its `channel` and `to` through the delivery queue. The
 * job's idempotency key makes a job re-run after a crash find its queued send instead of sending
 * again.
 */
export function hookDeliverer(channels: ChannelsService): HookResponseDeliverer {
  return async ({ idempotencyKey, channel, to, text }) => {
    if (!channel || !to) throw new Error('the mapping names no channel and recipient (channel, to)');
    const answer = await channels.deliver(channel, { op: 'send', channelId: to, text }, { idempotencyKey });
    if (answer.status === 'deadLetter') throw new Error(answer.error ?? 'delivery dead-lettered');
  };
}

/** Telegram's caption limit (1024) is the smallest of the platforms; a longer prompt is cut. */
const IMAGE_CAPTION_MAX = 1000;
const IMAGE_EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

/**
 * The media service's `deliverImage` hook, bound to the channels once they run (media starts
 * first). A generated image goes to its chat as an attachment through the delivery queue, keyed
 * by the chat and the image's own digest: the same image to the same chat is one delivery, even
 * when a tool call or a delivery is repeated. A dead-lettered delivery is the tool's error.
 */
export function lateImageDeliverer(): {
  deliverImage: NonNullable<MediaServiceOptions['deliverImage']>;
  attach(channels: ChannelsService): void;
} {
  let channels: ChannelsService | undefined;
  return {
    attach(next) {
      channels = next;
    },
    async deliverImage(target, image) {
      if (!channels) throw new Error('the channels are not running yet');
      const digest = createHash('sha256').update(image.data).digest('hex');
      const caption = image.caption?.slice(0, IMAGE_CAPTION_MAX);
      const answer = await channels.deliver(
        target.channelType,
        {
          op: 'attach',
          channelId: target.channelId,
          data: image.data,
          mimeType: image.mimeType,
          filename: `image.${Object.hasOwn(IMAGE_EXTENSIONS, image.mimeType) ? IMAGE_EXTENSIONS[image.mimeType] : 'png'}`,
          ...(caption ? { caption } : {}),
        },
        { idempotencyKey: `image:${target.channelType}:${target.channelId}:${digest}` },
      );
      if (answer.status === 'deadLetter')
        throw new ChannelsError(
          'PLATFORM_ERROR',
          `the image was not delivered: ${answer.error ?? 'dead-lettered'}`,
          {
            data: { channelType: target.channelType },
          },
        );
      return answer.messageId ? { messageId: answer.messageId } : {};
    },
  };
}

/**
 * The chat channels and their delivery queue: every attempt is a delivery trace and channel
 * activity, a refused inbound sender an audit event, inbound messages turns of `runner`.
 */
export async function startChannels(
  context: ServiceContext,
  lifecycle: Lifecycle,
  deps: {
    db: Database;
    /** Cluster mode: polling connectors run on the instance holding their singleton. */
    coordinator?: Coordinator | undefined;
    obsEvidence: ObsEvidence;
    securityAudit: SecurityAudit;
    runner: AgentTurnRunner;
    lookupSecret: (name: string) => Promise<string | undefined>;
    /** Links reactions on answers to their turns (learning's `reaction` outcome source). */
    reactions?: ReturnType<typeof channelReactions>;
    /** Cluster mode: a homed agent's inbound messages run on its home only. */
    inboundPlacement?: ChannelsServiceOptions['inboundPlacement'];
  },
): Promise<ChannelsService> {
  const { config, now, logger } = context;
  const { obsEvidence, securityAudit } = deps;
  return lifecycle.start(
    'channels',
    async () => {
      await deps.db.migrate('@agentd/channels', channelsMigrationSet());
      const service = createChannelsService({
        db: deps.db,
        section: await resolveChannelSecrets(config.channels, deps.lookupSecret, logger.module('channels')),
        notifications: config.notifications,
        runner: deps.reactions ? deps.reactions.runner(deps.runner) : deps.runner,
        // A platform with allowFrom but no agentId hands its inbound to the default agent.
        defaultAgentId: DEFAULT_AGENT_ID,
        shutdownGraceMs: config.gateway.shutdownGraceMs,
        ...(deps.coordinator
          ? {
              coordinator: deps.coordinator,
              connectorRenewMs: Math.floor((config.cluster.leaseMs ?? 10_000) / 3),
            }
          : {}),
        ...(deps.reactions ? { onReaction: deps.reactions.onReaction } : {}),
        ...(deps.inboundPlacement ? { inboundPlacement: deps.inboundPlacement } : {}),
        onAttempt: ({ entry, outcome, latencyMs, errorKind }) => {
          deps.reactions?.onAttempt({ entry, outcome });
          context.metrics?.delivery(entry.channelType, outcome);
          context.spans?.({
            name: 'channel.delivery',
            traceId: `delivery-${entry.deliveryId}`,
            startedAt: now() - latencyMs,
            durationMs: latencyMs,
            ok: outcome === 'delivered',
            attributes: {
              'agentd.platform': entry.channelType,
              'agentd.outcome': outcome,
              'agentd.attempt': entry.attempts,
              ...(errorKind ? { 'agentd.error_kind': errorKind } : {}),
            },
          });
          obsEvidence.recordDelivery({
            ts: now(),
            channelId: entry.operation.channelId,
            outcome,
            latencyMs,
            ...(errorKind ? { errorKind } : {}),
          });
          if (outcome === 'delivered')
            obsEvidence.recordChannelActivity({
              channelId: entry.operation.channelId,
              channelType: entry.channelType,
              lastActiveAt: now(),
              messagesSent: 1,
              messagesReceived: 0,
            });
        },
        onInbound: (message) =>
          obsEvidence.recordChannelActivity({
            channelId: message.channelId,
            channelType: message.channelType,
            lastActiveAt: now(),
            messagesSent: 0,
            messagesReceived: 1,
          }),
        onRefused: (message) =>
          securityAudit.emit({
            kind: 'auth',
            classification: 'denied',
            outcome: 'failure',
            severity: 'low',
            reason: 'channel_sender_not_allowed',
            channelType: message.channelType,
            channelId: message.channelId,
          }),
        now,
        logger: logger.module('channels'),
      });
      await service.start();
      return service;
    },
    (service) => service.close(),
  );
}
