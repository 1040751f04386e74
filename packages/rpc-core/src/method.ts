import type { z } from 'zod';
import { RpcCoreError } from './errors.js';
import type { RpcLogger } from './logger.js';

/** The scope a method requires; a token with `*` satisfies both (decided by the injected `authorize`). */
export type MethodScope = 'rpc' | 'admin';

/** The transport a request arrived on. */
export type TransportKind = 'ws' | 'http' | 'memory';

/** Who is calling, as established by the transport's `authenticate` callback. */
export interface Identity {
  /** Id of the token that authenticated the connection (never the secret). */
  tokenId: string;
  /** Client the token belongs to; targeted notifications are addressed by it. */
  clientId: string;
  /** Scopes granted to the token, for example `['rpc']` or `['*']`. */
  scopes: readonly string[];
  /** Set for a tenant-bound token: the one tenant whose sessions the caller reaches. */
  tenant?: string | undefined;
  /** Set when the tenant binding is narrowed to session-key prefixes. */
  sessionPrefixes?: readonly string[] | undefined;
}

/** Everything a handler may know about the request it is serving. */
export interface MethodContext {
  /** The authenticated caller. */
  identity: Identity;
  /** Shortcut for `identity.clientId`. */
  clientId: string;
  /** Id of the connection (one per WebSocket, one per HTTP request). */
  connectionId: string;
  /** Trace id generated for this request; log it and pass it downstream. */
  traceId: string;
  /** Aborted when the connection closes; long handlers should stop then. */
  signal: AbortSignal;
  /** Logger bound to `traceId`, `method`, `requestId`, `connectionId` and `clientId` when the injected logger supports `child`. */
  logger: RpcLogger;
  /** Transport the request arrived on. */
  transport: TransportKind;
  /** The JSON-RPC `id` as a string, or a generated id for a notification. */
  requestId: string;
  /** The method being called (its registered name). */
  method: string;
}

/**
 * A method: its name, required scope, zod params schema and handler.
 *
 * `params` may be any zod schema. A `z.object` accepts only by-name params
 * (a positional array fails validation with `-32602`); a method that wants
 * positional params says so with a `z.tuple` (or a union with one).
 */
export interface MethodDefinition<TParams extends z.ZodType = z.ZodType, TResult = unknown> {
  /** Method name in `namespace.method` form. */
  name: string;
  /** Scope the caller needs. */
  scope: MethodScope;
  /** One-line description, copied into the OpenRPC document. */
  description?: string | undefined;
  /** Schema the request's `params` (default `{}`) is validated against; the handler gets its output. */
  params: TParams;
  /** Schema of the result, used for documentation only (results are not validated at runtime). */
  result?: z.ZodType<TResult> | undefined;
  /** Does the work. Throw an `RpcError` to choose the client-visible error. */
  handler(params: z.output<TParams>, context: MethodContext): TResult | Promise<TResult>;
}

/** A method of any params and result type, as stored in a registry. */
export type AnyMethod = MethodDefinition<z.ZodType, unknown>;

const methodNamePattern = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * Checks a method definition and returns it unchanged with its types inferred
 * from the zod schemas.
 *
 * @throws {RpcCoreError} `INVALID_METHOD` when the name, scope, schema or handler is malformed.
 */
export function defineMethod<TParams extends z.ZodType, TResult>(
  definition: MethodDefinition<TParams, TResult>,
): MethodDefinition<TParams, TResult> {
  const problem = describeProblem(definition as unknown as Record<string, unknown>);
  if (problem !== undefined) {
    throw new RpcCoreError('INVALID_METHOD', `defineMethod: ${problem}`, {
      data: { name: (definition as { name?: unknown }).name },
    });
  }
  return definition;
}

function isZodSchema(value: unknown): value is z.ZodType {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { safeParseAsync?: unknown }).safeParseAsync === 'function'
  );
}

function describeProblem(definition: Record<string, unknown>): string | undefined {
  if (typeof definition.name !== 'string' || !methodNamePattern.test(definition.name)) {
    return `name must look like 'namespace.method', got ${JSON.stringify(definition.name)}`;
  }
  if (definition.scope !== 'rpc' && definition.scope !== 'admin') {
    return `${definition.name}: scope must be 'rpc' or 'admin'`;
  }
  if (!isZodSchema(definition.params)) return `${definition.name}: params must be a zod schema`;
  if (definition.result !== undefined && !isZodSchema(definition.result)) {
    return `${definition.name}: result must be a zod schema when given`;
  }
  if (typeof definition.handler !== 'function') return `${definition.name}: handler must be a function`;
  return undefined;
}

/** The set of methods a dispatcher serves, keyed by name. */
export class MethodRegistry {
  readonly #methods = new Map<string, AnyMethod>();

  /**
   * Adds methods. Accepts definitions from {@link defineMethod}.
   *
   * @throws {RpcCoreError} `DUPLICATE_METHOD` when a name is already registered (nothing is added then).
   */
  register(...methods: AnyMethod[]): this {
    const seen = new Set<string>();
    for (const method of methods) {
      defineMethod(method);
      if (this.#methods.has(method.name) || seen.has(method.name)) {
        throw new RpcCoreError('DUPLICATE_METHOD', `Method already registered: ${method.name}`, {
          data: { name: method.name },
        });
      }
      seen.add(method.name);
    }
    for (const method of methods) this.#methods.set(method.name, method);
    return this;
  }

  /** The method of that name, or `undefined`. */
  get(name: string): AnyMethod | undefined {
    return this.#methods.get(name);
  }

  /** Whether a method of that name is registered. */
  has(name: string): boolean {
    return this.#methods.has(name);
  }

  /** All methods, sorted by name. */
  list(): AnyMethod[] {
    return [...this.#methods.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** All method names, sorted. */
  names(): string[] {
    return this.list().map((method) => method.name);
  }

  /** Number of registered methods. */
  get size(): number {
    return this.#methods.size;
  }
}
