import type { AuditSeverity, SecurityAudit } from '@agentd/evidence/audit';
import { defineMethod, type MethodContext, type MethodDefinition, type MethodScope } from '@agentd/rpc-core';
import { z } from 'zod';

/** The params schema of a method that takes none: an empty object, nothing else allowed. */
type NoParams = z.ZodObject<{}, z.core.$strict>;

/**
 * A method as a namespace writes it: the name (after the namespace's prefix) is the first
 * argument, the scope is the name of the function it is passed to, and `params` may be left
 * out by a method that takes none.
 */
export type ScopedDefinition<TParams extends z.ZodType, TResult> = Omit<
  MethodDefinition<TParams, TResult>,
  'name' | 'scope' | 'params'
> & { params?: TParams };

/** Defines the method `<namespace>.<name>` of the scope the function is named after. */
export type DefineScoped = <TParams extends z.ZodType = NoParams, TResult = unknown>(
  name: string,
  definition: ScopedDefinition<TParams, TResult>,
) => MethodDefinition<TParams, TResult>;

/**
 * The two ways the method namespace `namespace` (`graph`, `obs.billing`) defines its methods:
 * `rpcMethod` and `adminMethod` (the scope a caller needs), each `defineMethod` with the
 * namespace's error translation around its handler, so a handler is one call into its service
 * and `toWire` turns that service's failures into wire errors (an error it does not know it
 * answers unchanged). A method without `params` takes none: `{}` or no params, any key refused.
 */
export function methodsOf(
  namespace: string,
  toWire?: (error: unknown) => unknown,
): {
  rpcMethod: DefineScoped;
  adminMethod: DefineScoped;
} {
  const scoped =
    (scope: MethodScope): DefineScoped =>
    <TParams extends z.ZodType, TResult>(name: string, definition: ScopedDefinition<TParams, TResult>) =>
      defineMethod<TParams, TResult>({
        name: `${namespace}.${name}`,
        ...definition,
        scope,
        // A fresh schema per method, as each wrote `z.object({}).strict()` before it became the default.
        params: definition.params ?? (z.object({}).strict() as z.ZodType as TParams),
        handler: toWire ? translated(definition.handler, toWire) : definition.handler,
      });
  return { rpcMethod: scoped('rpc'), adminMethod: scoped('admin') };
}

/**
 * The handler with `toWire` around its failures. A synchronous handler stays synchronous (no
 * promise per call): the dispatcher answers such a call without a microtask.
 */
function translated<TParams, TResult>(
  handler: (params: TParams, context: MethodContext) => TResult | Promise<TResult>,
  toWire: (error: unknown) => unknown,
): (params: TParams, context: MethodContext) => TResult | Promise<TResult> {
  const rethrow = (error: unknown): never => {
    throw toWire(error);
  };
  return (params, context) => {
    let result: TResult | Promise<TResult>;
    try {
      result = handler(params, context);
    } catch (error) {
      return rethrow(error);
    }
    return result instanceof Promise ? result.catch(rethrow) : result;
  };
}

/**
 * Emits the `audit:event` of an admin change a method made: kind `config`, allowed and
 * done, naming the method and the caller's token id (`caller`, never a secret) beside
 * `refs` (the action and what it touched).
 */
export function auditAdminChange(
  audit: SecurityAudit,
  context: MethodContext,
  severity: AuditSeverity,
  refs: { action: string } & Record<string, unknown>,
): void {
  const { action, ...touched } = refs;
  audit.emit({
    kind: 'config',
    classification: 'allowed',
    outcome: 'success',
    severity,
    action,
    method: context.method,
    caller: context.identity.tokenId,
    ...touched,
  });
}
