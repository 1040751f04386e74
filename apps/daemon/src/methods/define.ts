import { defineMethod, type MethodContext, type MethodDefinition, type MethodScope } from '@agentd/rpc-core';
import type { z } from 'zod';

/** A method as a namespace writes it: the scope is the name of the function it is passed to. */
export type ScopedDefinition<TParams extends z.ZodType, TResult> = Omit<
  MethodDefinition<TParams, TResult>,
  'scope'
>;

/** Defines one method of the scope the function is named after. */
export type DefineScoped = <TParams extends z.ZodType, TResult>(
  definition: ScopedDefinition<TParams, TResult>,
) => MethodDefinition<TParams, TResult>;

/**
 * The two ways a method namespace defines its methods: `rpcMethod` and `adminMethod` (the
 * scope a caller needs), each `defineMethod` with the namespace's error translation around
 * its handler, so a handler is one call into its service and `toWire` turns that service's
 * failures into wire errors (an error it does not know it answers unchanged).
 */
export function methodsOf(toWire?: (error: unknown) => unknown): {
  rpcMethod: DefineScoped;
  adminMethod: DefineScoped;
} {
  const scoped =
    (scope: MethodScope): DefineScoped =>
    <TParams extends z.ZodType, TResult>(definition: ScopedDefinition<TParams, TResult>) =>
      defineMethod<TParams, TResult>({
        ...definition,
        scope,
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
