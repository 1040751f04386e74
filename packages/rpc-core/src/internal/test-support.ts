import type { Server } from 'node:http';
import { z } from 'zod';
import type { DispatchConnection } from '../dispatcher.js';
import { RpcError } from '../errors.js';
import { defineMethod, type Identity, MethodRegistry } from '../method.js';

/** Identity holding only the `rpc` scope. */
export const rpcIdentity: Identity = { tokenId: 'tok-rpc', clientId: 'client-a', scopes: ['rpc'] };
/** Identity holding every scope. */
export const adminIdentity: Identity = { tokenId: 'tok-admin', clientId: 'client-admin', scopes: ['*'] };

export function connection(identity: Identity = rpcIdentity): DispatchConnection {
  return { identity, connectionId: 'conn-1', transport: 'memory' };
}

/** The failure response a transport answers: `code` and `message`, no `data`. */
export function rpcFailure(code: number, message: string, id: string | number | null = null) {
  return { jsonrpc: '2.0', error: { code, message }, id };
}

const pair = z.tuple([z.number(), z.number()]);

/**
 * The methods used by the JSON-RPC 2.0 specification's section 7 examples plus a
 * few that exercise scopes, errors and slow handlers.
 */
export function exampleRegistry(): MethodRegistry {
  const registry = new MethodRegistry();
  const notified: unknown[] = [];
  registry.register(
    defineMethod({
      name: 'subtract',
      scope: 'rpc',
      // Positional and by-name both, exactly as the specification's examples use it.
      params: z.union([pair, z.object({ minuend: z.number(), subtrahend: z.number() })]),
      result: z.number(),
      handler: (params) =>
        Array.isArray(params) ? params[0] - params[1] : params.minuend - params.subtrahend,
    }),
    defineMethod({
      name: 'sum',
      scope: 'rpc',
      params: z.array(z.number()),
      handler: (params) => params.reduce((total, value) => total + value, 0),
    }),
    // The specification's notification targets: each only records what it was sent.
    ...['update', 'notify_hello', 'notify_sum'].map((name) =>
      defineMethod({
        name,
        scope: 'rpc',
        params: z.array(z.number()),
        handler: (params) => {
          notified.push(params);
        },
      }),
    ),
    defineMethod({ name: 'get_data', scope: 'rpc', params: z.unknown(), handler: () => ['hello', 5] }),
    defineMethod({
      name: 'chat.echo',
      scope: 'rpc',
      description: 'Returns the message it was given.',
      params: z.object({ message: z.string(), repeat: z.number().int().min(1).default(1) }),
      result: z.object({ message: z.string() }),
      handler: (params) => ({ message: params.message.repeat(params.repeat) }),
    }),
    defineMethod({
      name: 'admin.secret',
      scope: 'admin',
      params: z.object({}),
      handler: () => 'classified',
    }),
    defineMethod({
      name: 'fail.internal',
      scope: 'rpc',
      params: z.object({}),
      handler: () => {
        throw new Error('database password is hunter2 at /srv/secret.db');
      },
    }),
    defineMethod({
      name: 'fail.notFound',
      scope: 'rpc',
      params: z.object({ id: z.string() }),
      handler: (params) => {
        throw RpcError.notFound('session', params.id);
      },
    }),
    defineMethod({
      name: 'slow.wait',
      scope: 'rpc',
      params: z.object({ ms: z.number().int().nonnegative() }),
      handler: async (params, context) => {
        await new Promise<void>((resolve) => setTimeout(resolve, params.ms));
        return { waited: params.ms, aborted: context.signal.aborted };
      },
    }),
    defineMethod({
      name: 'context.show',
      scope: 'rpc',
      params: z.object({}),
      handler: (_params, context) => ({
        clientId: context.clientId,
        tokenId: context.identity.tokenId,
        connectionId: context.connectionId,
        traceId: context.traceId,
        transport: context.transport,
        requestId: context.requestId,
      }),
    }),
  );
  return registry;
}

/**
 * `hang.forever`: a method that never answers on its own and resolves `'aborted'` once its
 * signal aborts. `onSignal` receives that signal when the handler starts.
 */
export function hangingMethod(onSignal: (signal: AbortSignal) => void = () => {}) {
  return defineMethod({
    name: 'hang.forever',
    scope: 'rpc',
    params: z.object({}),
    handler: (_params, context) =>
      new Promise((resolve) => {
        onSignal(context.signal);
        context.signal.addEventListener('abort', () => resolve('aborted'));
      }),
  });
}

/** Closes a test HTTP server, dropping its open connections first so `close` does not wait for them. */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
