import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AgentRuntime, entityIdSchema, sessionKeySchema } from '@agentd/agent-runtime';
import type { Identity } from '@agentd/auth-scopes';
import { createSseWriter, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { defaultSessionKey } from './methods/agent.js';
import { toRpcError } from './methods/agent-errors.js';

const queryParams = z
  .object({
    message: z.string().min(1).max(100_000),
    agentId: entityIdSchema.optional(),
    sessionKey: sessionKeySchema.optional(),
    token: z.string().optional(),
  })
  .strict();

/** Dependencies of {@link createChatStreamHandler}. */
export interface ChatStreamDeps {
  runtime: AgentRuntime;
  /** Bearer header or `token` query parameter → identity, or null. */
  authenticate(req: IncomingMessage): Identity | null;
  /** Whether the identity may call `rpc` methods. */
  authorize(identity: Identity): boolean;
  /** Interval of keep-alive comments. @default 15000 */
  heartbeatMs?: number;
  logger: {
    warn(fields: Record<string, unknown> & { hint: string; errorKind: string }, message?: string): void;
  };
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/**
 * `GET /api/chat/stream?message=…[&agentId=…][&sessionKey=…]`: one agent turn as server-sent
 * events (`start`, `delta`, `tool`, then `done` or `error`), with keep-alive comments; the turn is
 * cancelled when the client disconnects. Event format: docs/chat-stream.md.
 */
export function createChatStreamHandler(deps: ChatStreamDeps) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== 'GET') {
      sendJson(
        res,
        405,
        { error: RpcError.invalidRequest('Method not allowed: use GET').toJSON() },
        { allow: 'GET' },
      );
      return;
    }
    const identity = deps.authenticate(req);
    if (!identity) {
      sendJson(res, 401, { error: RpcError.unauthorized().toJSON() }, { 'www-authenticate': 'Bearer' });
      return;
    }
    if (!deps.authorize(identity)) {
      sendJson(res, 403, { error: RpcError.insufficientScope('rpc').toJSON() });
      return;
    }
    const query = Object.fromEntries(new URL(req.url ?? '/', 'http://localhost').searchParams);
    const parsed = queryParams.safeParse(query);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => ({
        path: issue.path.map(String),
        code: issue.code,
        message: issue.message,
      }));
      const first = issues[0];
      sendJson(res, 400, {
        error: RpcError.invalidParams(
          `Invalid params: ${first?.path.join('.') || '<root>'}: ${first?.message}`,
          issues,
        ).toJSON(),
      });
      return;
    }
    const { message, agentId, sessionKey } = parsed.data;
    const traceId = randomUUID();
    const key = sessionKey ?? defaultSessionKey(identity.clientId);
    const sse = createSseWriter(res, { heartbeatMs: deps.heartbeatMs ?? 15_000 });
    const controller = new AbortController();
    // The client going away cancels the turn; what streamed so far is kept in the session.
    sse.onClose(() => controller.abort());
    sse.send({ event: 'start', data: { sessionKey: key, agentId: agentId ?? null, traceId } });
    let sequence = 0;
    deps.runtime
      .runTurn({
        message,
        sessionKey: key,
        origin: 'rpc',
        traceId,
        signal: controller.signal,
        ...(agentId ? { agentId } : {}),
        onEvent: (event) => {
          sequence++;
          if (event.type === 'delta') {
            sse.send({ event: 'delta', id: sequence, data: { text: event.text, step: event.step } });
          } else if (event.type === 'tool-call') {
            sse.send({
              event: 'tool',
              id: sequence,
              data: {
                phase: 'call',
                toolName: event.toolName,
                toolCallId: event.toolCallId,
                step: event.step,
              },
            });
          } else {
            sse.send({
              event: 'tool',
              id: sequence,
              data: {
                phase: 'result',
                toolName: event.toolName,
                toolCallId: event.toolCallId,
                ok: event.ok,
                durationMs: event.durationMs,
                step: event.step,
              },
            });
          }
        },
      })
      .then(
        (result) => {
          sse.send({ event: 'done', data: result });
          sse.close();
        },
        (error: unknown) => {
          const wire = toRpcError(error);
          const body = wire instanceof RpcError ? wire.toJSON() : { code: -32603, message: 'Internal error' };
          if (!(wire instanceof RpcError)) {
            deps.logger.warn(
              { err: error, traceId, hint: 'see the log line of the failed turn', errorKind: 'internal' },
              'chat stream turn failed',
            );
          }
          sse.send({ event: 'error', data: body });
          sse.close();
        },
      );
  };
}
