import { z } from 'zod';
import { webhookMappingListSchema } from './mapping.js';
import { hmacSettingsSchema } from './signature.js';

/** The contract's minimum length of `webhooks.token`. */
export const MIN_TOKEN_LENGTH = 32;

/** The contract's default of `webhooks.maxBodyBytes`. */
export const DEFAULT_MAX_BODY_BYTES = 262_144;

// Same syntax as agentd's config store, declared here so the package stays standalone.
const secretReference = /^\$\{secret:[A-Za-z0-9_][A-Za-z0-9_.\-/]{0,127}\}$/;

/**
 * A webhook secret in config: a `${secret:NAME}` reference (checked for length once
 * resolved), or a literal of at least 32 characters.
 */
export const webhookTokenSchema = z.union([
  z.string().regex(secretReference),
  z.string().min(MIN_TOKEN_LENGTH, {
    message: `webhooks.token must be at least ${MIN_TOKEN_LENGTH} characters (or a \${secret:NAME} reference)`,
  }),
]);

/** True when `value` is a `${secret:NAME}` reference rather than a literal secret. */
export function isSecretReference(value: string): boolean {
  return secretReference.test(value);
}

const basePathSchema = z
  .string()
  .regex(/^\/[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/?$/, {
    message: 'Expected an absolute path with at least one segment, such as /hooks',
  })
  .transform((path) => (path.endsWith('/') ? path.slice(0, -1) : path));

/**
 * The `webhooks` config section (the contract's "Webhook configuration keys"), plus
 * `previousTokens` for rotation and `hmac` for the header settings.
 */
export const webhooksSectionSchema = z
  .object({
    /** Serve the hook endpoints; when false every hook path answers 404. @default false */
    enabled: z.boolean().default(false),
    /** Base path of the endpoints. @default '/hooks' */
    path: basePathSchema.default('/hooks'),
    /** HMAC secret: required by the strict endpoint, and by mapped ones when set. */
    token: webhookTokenSchema.optional(),
    /**
     * Older secrets still accepted during a rotation, each as `{ token }` so that config
     * redaction (which goes by field name) hides every one of them. @default []
     */
    previousTokens: z
      .array(z.object({ token: webhookTokenSchema }).strict())
      .max(8)
      .default([]),
    /** Largest accepted body in bytes; larger ones get 400. @default 262144 */
    maxBodyBytes: z.number().int().positive().max(16_777_216).default(DEFAULT_MAX_BODY_BYTES),
    /** Preset ids to enable (`mail`, `codehost`); unknown names are ignored. @default [] */
    presets: z.array(z.string().min(1).max(64)).default([]),
    /** Mappings, tried in order before the presets. @default [] */
    mappings: webhookMappingListSchema.default([]),
    /** Signature and timestamp header settings. @default the contract's HMAC defaults */
    hmac: hmacSettingsSchema.default(hmacSettingsSchema.parse({})),
  })
  .strict();

/** The parsed `webhooks` section. */
export type WebhooksSection = z.output<typeof webhooksSectionSchema>;

/** The strict endpoint's body (the contract's "Strict payload"). */
export const strictPayloadSchema = z
  .object({
    event: z.string().min(1),
    source: z.string().min(1),
    data: z.record(z.string(), z.unknown()),
    timestamp: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();

/** A valid strict payload. */
export type StrictPayload = z.output<typeof strictPayloadSchema>;
