import { defineMethod, type MethodDefinition, type MethodScope } from '@agentd/rpc-core';
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
export function methodsOf(toWire: (error: unknown) => unknown = (error) => error): {
  rpcMethod: DefineScoped;
  adminMethod: DefineScoped;
} {
  const scoped =
    (scope: MethodScope): DefineScoped =>
    <TParams extends z.ZodType, TResult>(definition: ScopedDefinition<TParams, TResult>) =>
      defineMethod<TParams, TResult>({
        ...definition,
        scope,
        handler: async (params, context) => {
          try {
            return await definition.handler(params, context);
          } catch (error) {
            throw toWire(error);
          }
        },
      });
  return { rpcMethod: scoped('rpc'), adminMethod: scoped('admin') };
}
