import type { WebhookLogger } from './logger.js';
import { noopLogger } from './logger.js';
import type { WebhookMapping } from './mapping.js';

/**
 * A built-in mapping enabled by name in `webhooks.presets`. Besides the mapping it names
 * the headers its sender uses for the delivery id and the signature.
 */
export interface WebhookPreset extends WebhookMapping {
  /** Header carrying the sender's unique delivery id (idempotency). */
  deliveryHeaderName?: string;
  /** Header carrying the sender's signature, tried after the configured one. */
  signatureHeaderName?: string;
}

/** The contract's presets, with the senders' brands replaced by `mail` and `codehost`. */
export const WEBHOOK_PRESETS: Readonly<Record<'mail' | 'codehost', Readonly<WebhookPreset>>> = Object.freeze({
  mail: Object.freeze({
    id: 'mail',
    name: 'E-mail push',
    match: { path: 'mail' },
    action: 'agent',
    wakeMode: 'now',
    sessionKey: 'hook:mail:{{payload.messages[0].id}}',
    messageTemplate: [
      'From: {{payload.messages[0].from}}',
      'Subject: {{payload.messages[0].subject}}',
      'Snippet: {{payload.messages[0].snippet}}',
      'Body: {{payload.messages[0].body}}',
    ].join('\n'),
  }),
  codehost: Object.freeze({
    id: 'codehost',
    name: 'Code-hosting events',
    match: { path: 'codehost' },
    action: 'agent',
    wakeMode: 'now',
    sessionKey: 'hook:codehost:{{headers.x-codehost-delivery}}',
    messageTemplate: [
      'Event: {{headers.x-codehost-event}}',
      'Repository: {{payload.repository.full_name}}',
      'Action: {{payload.action}}',
      'Sender: {{payload.sender.login}}',
    ].join('\n'),
    deliveryHeaderName: 'x-codehost-delivery',
    signatureHeaderName: 'x-codehost-signature-256',
  }),
});

/**
 * The presets named in `names`, in that order and without repeats. Unknown names are
 * ignored (the contract's versioning rule) with one warn line each.
 */
export function resolvePresets(
  names: readonly string[],
  logger: WebhookLogger = noopLogger,
): WebhookPreset[] {
  const out: WebhookPreset[] = [];
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) continue;
    seen.add(name);
    const preset = Object.hasOwn(WEBHOOK_PRESETS, name)
      ? WEBHOOK_PRESETS[name as keyof typeof WEBHOOK_PRESETS]
      : undefined;
    if (!preset) {
      logger.warn(
        {
          preset: name,
          known: Object.keys(WEBHOOK_PRESETS),
          hint: 'remove it from webhooks.presets or use a known preset name',
          errorKind: 'config',
        },
        'unknown webhook preset ignored',
      );
      continue;
    }
    out.push({ ...preset, match: { ...preset.match } });
  }
  return out;
}
