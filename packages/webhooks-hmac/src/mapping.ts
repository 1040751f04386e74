import { z } from 'zod';

/** The contract's match object: every field that is set must match. */
export const webhookMatchSchema = z
  .object({
    /** Equals the normalised request path after the base path (slashes stripped, lowercased). */
    path: z.string().max(512).optional(),
    /** Equals the payload's top-level `source` string. */
    source: z.string().max(512).optional(),
  })
  .strict();

/**
 * One entry of `webhooks.mappings[]` (the contract's "Webhook mapping" table). Templates
 * (`sessionKey`, `messageTemplate`, `textTemplate`) use `{{expr}}` expressions.
 */
export const webhookMappingSchema = z
  .object({
    /** Unique mapping id; the mapped endpoint answers it as `mapping`. */
    id: z.string().min(1).max(128),
    /** What requests this mapping takes; without one it takes every request. */
    match: webhookMatchSchema.optional(),
    /** Run an agent turn, or wake the heartbeat. @default 'agent' */
    action: z.enum(['agent', 'wake']).default('agent'),
    /** For `wake`: at once, or with the next scheduled beat. @default 'now' */
    wakeMode: z.enum(['now', 'next-heartbeat']).default('now'),
    /** Display name. */
    name: z.string().max(256).optional(),
    /** Target agent; the runtime's default agent when absent. */
    agentId: z.string().min(1).max(128).optional(),
    /** Session key template. @default `hook:<mapping id>` when absent or rendering empty */
    sessionKey: z.string().min(1).max(512).optional(),
    /** Message template for the agent, or the wake text. */
    messageTemplate: z.string().max(65_536).optional(),
    /** Alternative plain text template, used when `messageTemplate` is absent. */
    textTemplate: z.string().max(65_536).optional(),
    /** Deliver the agent's answer to a channel. */
    deliver: z.boolean().optional(),
    /** Channel to deliver to. */
    channel: z.string().min(1).max(128).optional(),
    /** Recipient on that channel. */
    to: z.string().min(1).max(512).optional(),
    /** Model override for the turn. */
    model: z.string().min(1).max(256).optional(),
    /** Agent execution timeout in seconds. */
    timeoutSeconds: z.number().int().positive().max(86_400).optional(),
  })
  .strict();

/** A parsed webhook mapping (defaults filled in). */
export type WebhookMapping = z.output<typeof webhookMappingSchema>;

/** A mapping as written in config (defaults optional). */
export type WebhookMappingInput = z.input<typeof webhookMappingSchema>;

/** A list of mappings whose ids are unique. */
export const webhookMappingListSchema = z.array(webhookMappingSchema).superRefine((mappings, context) => {
  const seen = new Set<string>();
  for (const [index, mapping] of mappings.entries()) {
    if (seen.has(mapping.id)) {
      context.addIssue({
        code: 'custom',
        path: [index, 'id'],
        message: `Duplicate mapping id: ${mapping.id}`,
      });
    }
    seen.add(mapping.id);
  }
});

/** Strips leading and trailing slashes and lowercases, as the contract normalises paths. */
export function normalizeHookPath(path: string): string {
  let start = 0;
  let end = path.length;
  while (start < end && path[start] === '/') start++;
  while (end > start && path[end - 1] === '/') end--;
  return path.slice(start, end).toLowerCase();
}

/** What a request offers to the matcher. */
export interface MatchInput {
  /** The request path after the base path, normalised or not. */
  path: string;
  /** The payload's `source`, when it is a string. */
  source?: string | undefined;
}

/**
 * The first mapping (array order) that takes the request, or `undefined`. A mapping
 * without `match` takes everything; `match.path` must equal the normalised path;
 * `match.source` must equal the payload's source; when both are set, both must match.
 */
export function findMapping<M extends { match?: { path?: string; source?: string } | undefined }>(
  mappings: readonly M[],
  input: MatchInput,
): M | undefined {
  const path = normalizeHookPath(input.path);
  for (const mapping of mappings) {
    const match = mapping.match;
    if (!match) return mapping;
    if (match.path !== undefined && normalizeHookPath(match.path) !== path) continue;
    if (match.source !== undefined && match.source !== input.source) continue;
    return mapping;
  }
  return undefined;
}
