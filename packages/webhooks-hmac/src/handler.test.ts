import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { postJson as post, testServers } from '../test/helpers.js';
import {
  createWebhookHandler,
  type WebhookEvent,
  type WebhookHandlerOptions,
  type WebhookOutcome,
} from './handler.js';
import { sign, signatureHeaders } from './signature.js';

const SECRET = 'handler-test-secret-0123456789abcdef';
const strictBody = JSON.stringify({ event: 'build.done', source: 'ci', data: { id: 7 } });

interface Harness {
  url: string;
  events: WebhookEvent[];
  outcomes: WebhookOutcome[];
  lines: Array<{ level: string; fields: Record<string, unknown>; message: string | undefined }>;
}

const servers = testServers();

async function serve(options: Partial<WebhookHandlerOptions> = {}): Promise<Harness> {
  const harness: Harness = { url: '', events: [], outcomes: [], lines: [] };
  const log =
    (level: string) =>
    (fields: Record<string, unknown>, message?: string): void => {
      harness.lines.push({ level, fields, message });
    };
  const handler = createWebhookHandler({
    secret: SECRET,
    onWebhook: (event) => {
      harness.events.push(event);
    },
    onOutcome: (outcome) => harness.outcomes.push(outcome),
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    ...options,
  });
  harness.url = await servers.listen((req, res) => void handler.node(req, res));
  return harness;
}

const signed = (body: string, secret = SECRET) => signatureHeaders({ secret, body, timestamp: true });

describe('createWebhookHandler', () => {
  it('accepts a signed strict event with exactly {received:true}', async () => {
    const h = await serve();
    const result = await post(`${h.url}/hooks/webhook`, strictBody, {
      ...signed(strictBody),
      'x-webhook-id': 'd1',
    });
    expect(result).toEqual({ status: 200, body: { received: true } });
    expect(h.events).toHaveLength(1);
    expect(h.events[0]).toMatchObject({
      endpoint: 'strict',
      path: 'webhook',
      deliveryId: 'd1',
      mapping: { id: 'webhook' },
      plan: { action: 'agent', sessionKey: 'hook:webhook:ci' },
    });
    expect(h.outcomes[0]).toMatchObject({
      endpoint: 'strict',
      outcome: 'accepted',
      reason: 'ok',
      status: 200,
    });
  });

  it('answers 401 for a strict event without or with a bad signature and never calls back', async () => {
    const h = await serve();
    expect(await post(`${h.url}/hooks/webhook`, strictBody)).toEqual({
      status: 401,
      body: { error: 'Missing signature' },
    });
    const bad = signed(strictBody, 'another-secret-another-secret-another');
    expect((await post(`${h.url}/hooks/webhook`, strictBody, bad)).status).toBe(401);
    expect(h.events).toHaveLength(0);
    expect(h.outcomes.map((o) => o.reason)).toEqual(['signature_missing', 'signature_mismatch']);
  });

  it('refuses strict events when no secret is configured', async () => {
    const h = await serve({ secret: undefined });
    const result = await post(`${h.url}/hooks/webhook`, strictBody, signed(strictBody));
    expect(result.status).toBe(401);
    expect(h.outcomes[0]?.reason).toBe('no_secret');
  });

  it('answers 400 for invalid JSON and 422 with issues for a schema failure', async () => {
    const h = await serve();
    const broken = '{"event":';
    expect(await post(`${h.url}/hooks/webhook`, broken, signed(broken))).toEqual({
      status: 400,
      body: { error: 'Invalid JSON' },
    });
    const wrong = JSON.stringify({ event: 'x', data: [], timestamp: 'yesterday' });
    const result = await post(`${h.url}/hooks/webhook`, wrong, signed(wrong));
    expect(result.status).toBe(422);
    expect(result.body.error).toBe('Invalid payload');
    const paths = (result.body.issues as Array<{ path: string[] }>)
      .map((issue) => issue.path.join('.'))
      .sort();
    expect(paths).toEqual(['data', 'source', 'timestamp']);
    expect(h.events).toHaveLength(0);
  });

  it('routes a mapped request to the first matching mapping and answers its id', async () => {
    const h = await serve({
      secret: undefined,
      mappings: [
        {
          id: 'builds',
          match: { path: 'ci' },
          messageTemplate: '{{query.ref}} {{headers.x-kind}} {{status}}',
        },
        { id: 'rest' },
      ],
    });
    const body = JSON.stringify({ status: 'green' });
    const result = await post(`${h.url}/hooks/CI/?ref=main`, body, { 'x-kind': 'build' });
    expect(result).toEqual({ status: 200, body: { received: true, mapping: 'builds' } });
    expect(h.events[0]?.plan).toEqual({
      action: 'agent',
      message: 'main build green',
      sessionKey: 'hook:builds',
    });
    expect((await post(`${h.url}/hooks/other`, body)).body).toEqual({ received: true, mapping: 'rest' });
  });

  it('verifies mapped requests only when a secret is set', async () => {
    const h = await serve({ mappings: [{ id: 'any' }] });
    const body = '{}';
    expect((await post(`${h.url}/hooks/x`, body)).status).toBe(401);
    expect((await post(`${h.url}/hooks/x`, body, signed(body))).status).toBe(200);
  });

  it('answers 404 when no mapping matches, and outside the base path', async () => {
    const h = await serve({ secret: undefined, mappings: [{ id: 'only', match: { path: 'only' } }] });
    expect(await post(`${h.url}/hooks/other`, '{}')).toEqual({
      status: 404,
      body: { error: 'No mapping matched' },
    });
    expect((await post(`${h.url}/elsewhere/only`, '{}')).status).toBe(404);
    expect((await post(`${h.url}/hooks/`, '{}')).status).toBe(404);
    expect(h.outcomes.map((o) => o.reason)).toEqual(['no_mapping', 'not_found', 'not_found']);
  });

  it('answers 405 for methods other than POST', async () => {
    const h = await serve();
    const response = await fetch(`${h.url}/hooks/webhook`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('answers 400 for a declared body above maxBodyBytes', async () => {
    const h = await serve({ secret: undefined, maxBodyBytes: 1024, mappings: [{ id: 'any' }] });
    const body = JSON.stringify({ pad: 'x'.repeat(2000) });
    const result = await post(`${h.url}/hooks/big`, body);
    expect(result).toEqual({ status: 400, body: { error: 'Payload too large (maximum 1024 bytes)' } });
    expect(h.events).toHaveLength(0);
    // The connection stays usable: the next request on the same server works.
    expect((await post(`${h.url}/hooks/small`, '{}')).status).toBe(200);
  });

  it('stops keeping a chunked body once it passes maxBodyBytes', async () => {
    const h = await serve({ secret: undefined, maxBodyBytes: 1024, mappings: [{ id: 'any' }] });
    const url = new URL(`${h.url}/hooks/chunked`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 8; i++) req.write('x'.repeat(512));
      req.end();
    });
    expect(status).toBe(400);
    expect(h.outcomes[0]).toMatchObject({ reason: 'body_too_large', bodyBytes: 0 });
  });

  it('answers 500 when the callback throws and logs no body or signature', async () => {
    const h = await serve({
      onWebhook: () => {
        throw new Error('disk full');
      },
    });
    const secretBody = JSON.stringify({
      event: 'e',
      source: 's',
      data: { password: 'hunter2-secret-value' },
    });
    const headers = signed(secretBody);
    const result = await post(`${h.url}/hooks/webhook`, secretBody, headers);
    expect(result).toEqual({ status: 500, body: { error: 'Internal error' } });
    const logged = JSON.stringify(
      h.lines.map((line) => ({ ...line, fields: { ...line.fields, err: undefined } })),
    );
    expect(logged).not.toContain('hunter2');
    expect(logged).not.toContain(headers['x-webhook-signature']);
    expect(h.lines.find((line) => line.level === 'error')?.fields).toMatchObject({ errorKind: 'internal' });
  });

  it('reports duplicates returned by the callback as duplicate, still 200', async () => {
    const h = await serve({ onWebhook: () => ({ duplicate: true }) });
    const result = await post(`${h.url}/hooks/webhook`, strictBody, {
      ...signed(strictBody),
      'x-webhook-id': 'same',
    });
    expect(result).toEqual({ status: 200, body: { received: true } });
    expect(h.outcomes[0]).toMatchObject({ outcome: 'duplicate', deliveryId: 'same' });
  });

  it('takes the codehost preset signature and delivery headers', async () => {
    const h = await serve({ presets: ['codehost'] });
    const body = JSON.stringify({
      action: 'closed',
      repository: { full_name: 'a/b' },
      sender: { login: 'c' },
    });
    const result = await post(`${h.url}/hooks/codehost`, body, {
      'x-codehost-signature-256': sign({ secret: SECRET, body, prefix: true }),
      'x-codehost-delivery': 'gh-1',
      'x-codehost-event': 'issues',
    });
    expect(result).toEqual({ status: 200, body: { received: true, mapping: 'codehost' } });
    expect(h.events[0]).toMatchObject({
      deliveryId: 'gh-1',
      plan: {
        sessionKey: 'hook:codehost:gh-1',
        message: 'Event: issues\nRepository: a/b\nAction: closed\nSender: c',
      },
    });
  });

  it('follows a custom base path', async () => {
    const h = await serve({ basePath: '/in/', secret: undefined, mappings: [{ id: 'any' }] });
    expect((await post(`${h.url}/in/x`, '{}')).status).toBe(200);
    expect((await post(`${h.url}/hooks/x`, '{}')).status).toBe(404);
  });

  it('refuses invalid options naming the field', () => {
    expect(() => createWebhookHandler({ onWebhook: () => undefined, maxBodyBytes: 0 })).toThrow(
      /maxBodyBytes/,
    );
    expect(() =>
      createWebhookHandler({ onWebhook: () => undefined, mappings: [{ id: 'a' }, { id: 'a' }] }),
    ).toThrow(/mappings\.1\.id/);
  });
});

describe('WebhookHandler.fetch', () => {
  it('handles Web Requests with the same answers', async () => {
    const events: WebhookEvent[] = [];
    const handler = createWebhookHandler({
      secret: SECRET,
      maxBodyBytes: 256,
      onWebhook: (e) => void events.push(e),
    });
    const ok = await handler.fetch(
      new Request('http://local/hooks/webhook', {
        method: 'POST',
        headers: signed(strictBody),
        body: strictBody,
      }),
    );
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ received: true });
    const unsigned = await handler.fetch(
      new Request('http://local/hooks/webhook', { method: 'POST', body: strictBody }),
    );
    expect(unsigned.status).toBe(401);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(100)));
        controller.close();
      },
    });
    const big = await handler.fetch(
      new Request('http://local/hooks/webhook', {
        method: 'POST',
        body: stream,
        duplex: 'half',
      } as RequestInit),
    );
    expect(big.status).toBe(400);
    expect(events).toHaveLength(1);
  });
});
