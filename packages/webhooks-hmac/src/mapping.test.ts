import { describe, expect, it } from 'vitest';
import { planWebhookAction } from './action.js';
import { webhooksSectionSchema } from './config.js';
import { findMapping, normalizeHookPath, webhookMappingListSchema, webhookMappingSchema } from './mapping.js';
import { resolvePresets, WEBHOOK_PRESETS } from './presets.js';

const mappings = webhookMappingListSchema.parse([
  { id: 'builds', match: { path: '/CI/Builds/' } },
  { id: 'ci-source', match: { source: 'ci' } },
  { id: 'both', match: { path: 'deploy', source: 'cd' } },
  { id: 'deploy-any', match: { path: 'deploy' } },
  { id: 'catch-all' },
]);

describe('normalizeHookPath', () => {
  it('strips leading and trailing slashes and lowercases', () => {
    expect(normalizeHookPath('//Mail/Inbox//')).toBe('mail/inbox');
    expect(normalizeHookPath('')).toBe('');
    expect(normalizeHookPath('///')).toBe('');
  });
});

describe('findMapping', () => {
  it('matches normalised paths', () => {
    expect(findMapping(mappings, { path: 'ci/builds' })?.id).toBe('builds');
    expect(findMapping(mappings, { path: '/ci/BUILDS/' })?.id).toBe('builds');
  });

  it('takes the first match in array order', () => {
    expect(findMapping(mappings, { path: 'ci/builds', source: 'ci' })?.id).toBe('builds');
    expect(findMapping(mappings, { path: 'other', source: 'ci' })?.id).toBe('ci-source');
  });

  it('needs both path and source when both are set', () => {
    expect(findMapping(mappings, { path: 'deploy', source: 'cd' })?.id).toBe('both');
    expect(findMapping(mappings, { path: 'deploy', source: 'other' })?.id).toBe('deploy-any');
  });

  it('lets a mapping without match take everything', () => {
    expect(findMapping(mappings, { path: 'anything' })?.id).toBe('catch-all');
  });

  it('returns undefined when nothing matches', () => {
    expect(findMapping(mappings.slice(0, 4), { path: 'nothing' })).toBeUndefined();
    expect(findMapping([], { path: 'x' })).toBeUndefined();
  });
});

describe('webhookMappingSchema', () => {
  it('fills the contract defaults', () => {
    expect(webhookMappingSchema.parse({ id: 'x' })).toEqual({ id: 'x', action: 'agent', wakeMode: 'now' });
  });

  it('refuses unknown keys, bad actions and non-positive timeouts', () => {
    expect(webhookMappingSchema.safeParse({ id: 'x', acton: 'agent' }).success).toBe(false);
    expect(webhookMappingSchema.safeParse({ id: 'x', action: 'run' }).success).toBe(false);
    expect(webhookMappingSchema.safeParse({ id: 'x', timeoutSeconds: 0 }).success).toBe(false);
    expect(webhookMappingSchema.safeParse({ id: 'x', timeoutSeconds: 1.5 }).success).toBe(false);
  });
});

describe('webhookMappingListSchema', () => {
  it('refuses duplicate ids naming the index', () => {
    const result = webhookMappingListSchema.safeParse([{ id: 'a' }, { id: 'a' }]);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual([1, 'id']);
  });
});

describe('webhooksSectionSchema', () => {
  it('has the contract defaults', () => {
    expect(webhooksSectionSchema.parse({})).toMatchObject({
      enabled: false,
      path: '/hooks',
      maxBodyBytes: 262144,
      presets: [],
      mappings: [],
      previousTokens: [],
      hmac: {
        headerName: 'x-webhook-signature',
        algorithm: 'sha256',
        maxAgeSec: 300,
        requireTimestamp: false,
      },
    });
  });

  it('refuses a token shorter than 32 characters and accepts a secret reference', () => {
    const short = webhooksSectionSchema.safeParse({ token: 'x'.repeat(31) });
    expect(short.success).toBe(false);
    expect(JSON.stringify(short.error?.issues)).toContain('32');
    expect(webhooksSectionSchema.safeParse({ token: 'x'.repeat(32) }).success).toBe(true);
    expect(webhooksSectionSchema.safeParse({ token: '${secret:HOOK_TOKEN}' }).success).toBe(true);
  });

  it('normalises a trailing slash of the base path and refuses the root', () => {
    expect(webhooksSectionSchema.parse({ path: '/in/hooks/' }).path).toBe('/in/hooks');
    expect(webhooksSectionSchema.safeParse({ path: '/' }).success).toBe(false);
    expect(webhooksSectionSchema.safeParse({ path: 'hooks' }).success).toBe(false);
  });
});

describe('resolvePresets', () => {
  it('returns the named presets in order and warns once per unknown name', () => {
    const warnings: Array<Record<string, unknown>> = [];
    const logger = {
      debug: () => {},
      info: () => {},
      warn: (fields: Record<string, unknown>) => warnings.push(fields),
      error: () => {},
    };
    const presets = resolvePresets(['codehost', 'pager', 'mail', 'codehost'], logger);
    expect(presets.map((preset) => preset.id)).toEqual(['codehost', 'mail']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ preset: 'pager', errorKind: 'config' });
  });

  it('does not resolve names from the prototype chain', () => {
    expect(resolvePresets(['toString', '__proto__', 'constructor'])).toEqual([]);
  });
});

describe('WEBHOOK_PRESETS', () => {
  it('mail renders the session key and the four message lines of the first message', () => {
    const payload = {
      messages: [
        { id: 'm-1', from: 'ada@example.org', subject: 'Hello', snippet: 'Short', body: 'Long text' },
        { id: 'm-2', from: 'other@example.org' },
      ],
    };
    const plan = planWebhookAction(WEBHOOK_PRESETS.mail, { payload, path: 'mail' });
    expect(plan).toEqual({
      action: 'agent',
      sessionKey: 'hook:mail:m-1',
      message: 'From: ada@example.org\nSubject: Hello\nSnippet: Short\nBody: Long text',
    });
  });

  it('codehost renders the delivery header, event header, repository, action and sender', () => {
    const payload = {
      action: 'opened',
      repository: { full_name: 'acme/widgets' },
      sender: { login: 'octo' },
    };
    const headers = { 'x-codehost-delivery': 'd-42', 'x-codehost-event': 'pull_request' };
    const plan = planWebhookAction(WEBHOOK_PRESETS.codehost, { payload, headers, path: 'codehost' });
    expect(plan).toEqual({
      action: 'agent',
      sessionKey: 'hook:codehost:d-42',
      message: 'Event: pull_request\nRepository: acme/widgets\nAction: opened\nSender: octo',
    });
  });
});

describe('planWebhookAction', () => {
  it('carries agentId, model, timeout and delivery fields and falls back to hook:<id>', () => {
    const mapping = webhookMappingSchema.parse({
      id: 'alerts',
      agentId: 'ops',
      model: 'small',
      timeoutSeconds: 30,
      deliver: true,
      channel: 'telegram',
      to: '42',
      sessionKey: '{{missing}}',
      textTemplate: 'Alert {{level}}',
    });
    expect(planWebhookAction(mapping, { payload: { level: 'high' } })).toEqual({
      action: 'agent',
      message: 'Alert high',
      sessionKey: 'hook:alerts',
      agentId: 'ops',
      model: 'small',
      timeoutMs: 30_000,
      deliver: true,
      channel: 'telegram',
      to: '42',
    });
  });

  it('plans wakes with their mode and text', () => {
    const mapping = webhookMappingSchema.parse({
      id: 'nudge',
      action: 'wake',
      wakeMode: 'next-heartbeat',
      messageTemplate: 'Check {{path}}',
    });
    expect(planWebhookAction(mapping, { payload: {}, path: 'nudge' })).toEqual({
      action: 'wake',
      mode: 'next-heartbeat',
      text: 'Check nudge',
    });
  });

  it('summarises the payload when no template is set', () => {
    const mapping = webhookMappingSchema.parse({ id: 'raw' });
    const plan = planWebhookAction(mapping, { payload: { a: 1 }, path: 'raw' });
    expect(plan).toMatchObject({ action: 'agent', message: 'Webhook raw received on /raw:\n{"a":1}' });
  });
});
