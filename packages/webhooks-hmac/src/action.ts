import type { WebhookMapping } from './mapping.js';
import { renderTemplate, type TemplateContext } from './template.js';

/** An agent turn a mapping asks for, with every template rendered. */
export interface AgentActionPlan {
  action: 'agent';
  /** The rendered `messageTemplate` (or `textTemplate`); a summary of the payload when neither is set. */
  message: string;
  /** The rendered `sessionKey`; `hook:<mapping id>` when absent or rendering empty. */
  sessionKey: string;
  agentId?: string;
  model?: string;
  /** `timeoutSeconds` in milliseconds. */
  timeoutMs?: number;
  deliver?: boolean;
  channel?: string;
  to?: string;
}

/** A heartbeat wake a mapping asks for. */
export interface WakeActionPlan {
  action: 'wake';
  /** `now` wakes at once; `next-heartbeat` queues the text for the next scheduled beat. */
  mode: 'now' | 'next-heartbeat';
  /** The rendered `messageTemplate` (or `textTemplate`); the mapping's name when neither is set. */
  text: string;
}

/** What a matched mapping asks the host to do. */
export type WebhookActionPlan = AgentActionPlan | WakeActionPlan;

/** Largest payload excerpt put into a default message, in characters. */
const DEFAULT_MESSAGE_PAYLOAD_CHARS = 16_384;

/**
 * Renders a mapping's templates against a request into the action to run. Never throws:
 * unresolved expressions render empty, as the template engine promises.
 */
export function planWebhookAction(mapping: WebhookMapping, context: TemplateContext): WebhookActionPlan {
  const template = mapping.messageTemplate ?? mapping.textTemplate;
  const label = mapping.name ?? mapping.id;
  if (mapping.action === 'wake') {
    return {
      action: 'wake',
      mode: mapping.wakeMode,
      text: template === undefined ? `Webhook ${label}` : renderTemplate(template, context),
    };
  }
  const message = template === undefined ? defaultMessage(label, context) : renderTemplate(template, context);
  const sessionKey = mapping.sessionKey === undefined ? '' : renderTemplate(mapping.sessionKey, context);
  const plan: AgentActionPlan = {
    action: 'agent',
    message,
    sessionKey: sessionKey === '' ? `hook:${mapping.id}` : sessionKey.slice(0, 512),
  };
  if (mapping.agentId !== undefined) plan.agentId = mapping.agentId;
  if (mapping.model !== undefined) plan.model = mapping.model;
  if (mapping.timeoutSeconds !== undefined) plan.timeoutMs = mapping.timeoutSeconds * 1000;
  if (mapping.deliver !== undefined) plan.deliver = mapping.deliver;
  if (mapping.channel !== undefined) plan.channel = mapping.channel;
  if (mapping.to !== undefined) plan.to = mapping.to;
  return plan;
}

function defaultMessage(label: string, context: TemplateContext): string {
  const payload = renderTemplate('{{payload}}', context);
  const excerpt =
    payload.length > DEFAULT_MESSAGE_PAYLOAD_CHARS
      ? `${payload.slice(0, DEFAULT_MESSAGE_PAYLOAD_CHARS)}… (truncated)`
      : payload;
  return `Webhook ${label} received on /${context.path ?? ''}:\n${excerpt}`;
}
