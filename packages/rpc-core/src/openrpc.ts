import { z } from 'zod';
import { RpcCoreError } from './errors.js';
import { defineMethod, type MethodDefinition, type MethodRegistry, type MethodScope } from './method.js';

/** A JSON Schema object as produced by `z.toJSONSchema`. */
export type JsonSchema = Record<string, unknown>;

/** An OpenRPC content descriptor. */
export interface OpenRpcContentDescriptor {
  name: string;
  description?: string;
  required?: boolean;
  schema: JsonSchema;
}

/** An OpenRPC method object, with the required scope in `x-scope`. */
export interface OpenRpcMethod {
  name: string;
  description?: string;
  params: OpenRpcContentDescriptor[];
  paramStructure: 'by-name' | 'either';
  result: OpenRpcContentDescriptor;
  'x-scope': MethodScope;
  /** Present when the params schema is not an object (for example a positional tuple): the whole schema. */
  'x-params-schema'?: JsonSchema;
}

/** The `info` object of an OpenRPC document. */
export interface OpenRpcInfo {
  /** API title, for example `agentd`. */
  title: string;
  /** API version, usually the daemon's version. */
  version: string;
  /** Optional longer description. */
  description?: string | undefined;
}

/** An OpenRPC 1.3 document. */
export interface OpenRpcDocument {
  openrpc: '1.3.2';
  info: OpenRpcInfo;
  methods: OpenRpcMethod[];
  components: { schemas: Record<string, JsonSchema> };
}

const infoSchema = z.object({
  title: z.string().min(1),
  version: z.string().min(1),
  description: z.string().optional(),
});

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // Parameters are described as callers may send them (defaults make fields optional); results as produced.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/**
 * Moves a schema's `$defs` into the document's components under names prefixed by `prefix`, rewriting its
 * `$ref`s so they still resolve once the schema is embedded in the OpenRPC document.
 */
function hoistDefinitions(
  schema: JsonSchema,
  prefix: string,
  components: Record<string, JsonSchema>,
): JsonSchema {
  const { $defs, ...body } = schema as JsonSchema & { $defs?: Record<string, JsonSchema> };
  let referencesRoot = false;
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') {
        if (inner === '#') {
          referencesRoot = true;
          out[key] = `#/components/schemas/${prefix}`;
        } else if (inner.startsWith('#/$defs/')) {
          out[key] = `#/components/schemas/${prefix}.${inner.slice('#/$defs/'.length)}`;
        } else {
          out[key] = inner;
        }
      } else {
        out[key] = rewrite(inner);
      }
    }
    return out;
  };
  const rewritten = rewrite(body) as JsonSchema;
  for (const [name, definition] of Object.entries($defs ?? {})) {
    components[`${prefix}.${name}`] = rewrite(definition) as JsonSchema;
  }
  if (referencesRoot) components[prefix] = rewritten;
  return rewritten;
}

function describeMethod(method: MethodDefinition, components: Record<string, JsonSchema>): OpenRpcMethod {
  const params = hoistDefinitions(toSchema(method.params, 'input'), `${method.name}.params`, components);
  const result: OpenRpcContentDescriptor = {
    name: 'result',
    schema: method.result
      ? hoistDefinitions(toSchema(method.result, 'output'), `${method.name}.result`, components)
      : {},
  };
  const base = {
    name: method.name,
    ...(method.description === undefined ? {} : { description: method.description }),
  };
  const properties = params.properties as Record<string, JsonSchema> | undefined;
  if (params.type === 'object' && properties !== undefined) {
    const required = new Set((params.required as string[] | undefined) ?? []);
    const descriptors = Object.entries(properties).map(([name, schema]) => {
      const descriptor: OpenRpcContentDescriptor = { name, required: required.has(name), schema };
      if (typeof schema.description === 'string') descriptor.description = schema.description;
      return descriptor;
    });
    return { ...base, params: descriptors, paramStructure: 'by-name', result, 'x-scope': method.scope };
  }
  return {
    ...base,
    params: [],
    paramStructure: 'either',
    result,
    'x-scope': method.scope,
    'x-params-schema': params,
  };
}

/**
 * Builds an OpenRPC 1.3 document describing every method of `registry`: its params as by-name content
 * descriptors generated from the zod object schema, its result schema (`{}` when none is declared, since
 * OpenRPC reads a missing result as notification-only) and its scope in `x-scope`.
 *
 * @throws {RpcCoreError} `INVALID_ARGUMENT` when `info` lacks a title or version.
 */
export function toOpenRpc(registry: MethodRegistry, info: OpenRpcInfo): OpenRpcDocument {
  const checked = infoSchema.safeParse(info);
  if (!checked.success) {
    throw new RpcCoreError('INVALID_ARGUMENT', 'toOpenRpc: info needs a non-empty title and version', {
      cause: checked.error,
    });
  }
  const components: Record<string, JsonSchema> = {};
  const methods = registry.list().map((method) => describeMethod(method, components));
  return { openrpc: '1.3.2', info: checked.data, methods, components: { schemas: components } };
}

/**
 * Defines `rpc.discover` (scope `rpc`), answering the OpenRPC document of `registry`. The document is rebuilt
 * only when methods were added since the last call.
 */
export function rpcDiscoverMethod(registry: MethodRegistry, info: OpenRpcInfo) {
  let cached: { size: number; document: OpenRpcDocument } | undefined;
  return defineMethod({
    name: 'rpc.discover',
    scope: 'rpc',
    description: 'OpenRPC 1.3 document of every method this server serves, with scopes and params schemas.',
    params: z.object({}),
    handler: (): OpenRpcDocument => {
      if (cached?.size !== registry.size)
        cached = { size: registry.size, document: toOpenRpc(registry, info) };
      return cached.document;
    },
  });
}
