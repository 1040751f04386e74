import { openDatabase } from '@agentd/storage';
import { databasePerTest, turnRunner } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson as post, testServers } from '../test/helpers.js';
import { type WebhooksSection, webhooksSectionSchema } from './config.js';
import type { WebhookOutcome } from './handler.js';
import { createWebhookService, type WebhookRefusal, type WebhookService } from './service.js';
import { signatureHeaders } from './signature.js';
import { webhookMigrations } from './store.js';

const SECRET = 'service-test-secret-0123456789abcdef';

const temp = databasePerTest('webhooks-service-', (dataDir) => openDatabase({ dataDir }));
let service: WebhookService | undefined;

afterEach(async () => {
  await service?.close();
  service = undefined;
});

// Registered after the hook above so that (after-hooks run last-registered first) the servers
// stop before the service and the database close.
const servers = testServers();

const section = (input: Record<string, unknown>): WebhooksSection => webhooksSectionSchema.parse(input);

function fakeRunner() {
  const messages: string[] = [];
  let notify: (() => void) | undefined;
  const runner = turnRunner((request) => {
    messages.push(request.message);
    notify?.();
    return 'ok';
  }, 'hook:none');
  const first = () =>
    messages.length > 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          notify = resolve;
        });
  return { runner, messages, first };
}

/** Serves `target` on a free port; paths outside the base path answer 404 as the daemon does. */
async function serve(target: WebhookService): Promise<string> {
  return servers.listen((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    if (target.matches(path)) void target.handle(req, res);
    else res.writeHead(404).end('{}');
  });
}

const signed = (body: string) => signatureHeaders({ secret: SECRET, body });

describe('createWebhookService', () => {
  it('migrates the tables, accepts a signed agent webhook and drains it through the runner', async () => {
    const { runner, messages, first } = fakeRunner();
    const outcomes: Array<{ outcome: WebhookOutcome; verified: boolean }> = [];
    service = await createWebhookService({
      db: temp.db,
      section: section({
        enabled: true,
        token: SECRET,
        mappings: [{ id: 'ci', match: { path: 'ci' }, messageTemplate: 'build {{id}}' }],
      }),
      runner,
      onOutcome: (outcome, context) => outcomes.push({ outcome, verified: context.verified }),
    });
    const url = await serve(service);
    const body = JSON.stringify({ id: 7 });
    const answer = await post(`${url}/hooks/ci`, body, signed(body));
    expect(answer.status).toBe(200);
    await first();
    expect(messages).toEqual(['build 7']);
    expect(outcomes.map((entry) => [entry.outcome.outcome, entry.verified])).toEqual([['accepted', true]]);
    // The migrations ran through the given database (a second run applies nothing new).
    expect((await temp.db.migrate('@agentd/webhooks-hmac', [...webhookMigrations])).applied).toEqual([]);
  });

  it('hands wakes to the target at once and gives it the wakes stored while it was absent', async () => {
    const mappings = [
      { id: 'now', match: { path: 'now' }, action: 'wake', textTemplate: 'now {{n}}' },
      {
        id: 'later',
        match: { path: 'later' },
        action: 'wake',
        wakeMode: 'next-heartbeat',
        textTemplate: 'later',
      },
    ];
    const calls: string[] = [];
    const target = {
      wakeNow: (text?: string) => void calls.push(`now:${text}`),
      queueForNextBeat: (text: string) => void calls.push(`next:${text}`),
    };
    // First without a target: the wake is stored.
    const first = await createWebhookService({ db: temp.db, section: section({ enabled: true, mappings }) });
    const url = await serve(first);
    expect((await post(`${url}/hooks/later`, '{}')).status).toBe(200);
    await first.close();
    await servers.stop();

    service = await createWebhookService({
      db: temp.db,
      section: section({ enabled: true, mappings }),
      wakeTarget: target,
    });
    expect(calls).toEqual(['next:later']);
    const again = await serve(service);
    expect((await post(`${again}/hooks/now`, '{"n":2}')).status).toBe(200);
    expect(calls).toEqual(['next:later', 'now:now 2']);
    expect(await service.store.pendingWakes(10)).toEqual([]);
  });

  it('claims no path while disabled and follows a new base path once configured', async () => {
    service = await createWebhookService({ db: temp.db, section: section({ enabled: false }) });
    expect(service.matches('/hooks')).toBe(false);
    expect(service.matches('/hooks/x')).toBe(false);
    await service.configure(section({ enabled: true, path: '/in' }));
    expect(service.matches('/in/x')).toBe(true);
    expect(service.matches('/inbox')).toBe(false);
    expect(service.matches('/hooks/x')).toBe(false);
  });

  it('answers 500 on every hook path while the token cannot be used, and reports each refusal', async () => {
    const refusals: WebhookRefusal[] = [];
    const errors: string[] = [];
    const secrets: Record<string, string> = { HOOK_TOKEN: 'short' };
    service = await createWebhookService({
      db: temp.db,
      section: section({ enabled: true, token: '${secret:HOOK_TOKEN}' }),
      resolveSecrets: async (fields) => ({
        ...fields,
        token: fields.token?.replace(/^\$\{secret:(\w+)\}$/, (_all, name: string) => secrets[name] ?? ''),
      }),
      onRefused: (refusal) => refusals.push(refusal),
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: () => undefined,
        error: (_fields, message) => void errors.push(message ?? ''),
      },
    });
    const url = await serve(service);
    const answer = await post(`${url}/hooks/Alerts/?x=1`, '{}');
    expect(answer).toEqual({ status: 500, body: { error: 'Webhook configuration error' } });
    expect(refusals).toEqual([{ path: 'alerts', reason: 'secret_unusable', status: 500 }]);
    expect(errors).toContain('webhooks disabled: the token cannot be used');
    // A usable token repairs the section without a restart.
    secrets.HOOK_TOKEN = SECRET;
    await service.configure(
      section({ enabled: true, token: '${secret:HOOK_TOKEN}', mappings: [{ id: 'a' }] }),
    );
    const body = '{}';
    expect((await post(`${url}/hooks/alerts`, body, signed(body))).status).toBe(200);
  });

  it('tells the outcome callback an unsigned path is new once per path and configuration', async () => {
    const firsts: boolean[] = [];
    const config = section({ enabled: true, mappings: [{ id: 'open', action: 'wake' }] });
    service = await createWebhookService({
      db: temp.db,
      section: config,
      onOutcome: (outcome, context) => {
        expect(context.verified).toBe(false);
        firsts.push(context.firstUnsigned(outcome.path));
      },
    });
    const url = await serve(service);
    await post(`${url}/hooks/a`, '{}');
    await post(`${url}/hooks/a`, '{}');
    await post(`${url}/hooks/b`, '{}');
    await service.configure(config);
    await post(`${url}/hooks/a`, '{}');
    expect(firsts).toEqual([true, false, true, true]);
  });
});
