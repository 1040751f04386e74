import { z } from 'zod';

/** String form of a session key: 1-512 characters, no control characters; colons separate segments. */
export const sessionKeySchema = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[^\p{Cc}]+$/u, 'printable characters only');

/** Object form of a session key (`agent.execute`). */
export const sessionKeyObjectSchema = z
  .object({ tenantId: z.string().min(1), userId: z.string().min(1), channelId: z.string().min(1) })
  .strict();

/** The identities a session key carries. */
export type SessionKeyObject = z.infer<typeof sessionKeyObjectSchema>;

function encodeSegment(segment: string): string {
  return segment.replace(/%/g, '%25').replace(/:/g, '%3A');
}

function decodeSegment(segment: string): string {
  return segment.replace(/%3A/gi, ':').replace(/%25/g, '%');
}

/** `{tenantId, userId, channelId}` → `<tenantId>:<channelId>:<userId>`, each segment escaping `:` and `%`. */
export function formatSessionKey(key: SessionKeyObject): string {
  return [key.tenantId, key.channelId, key.userId].map(encodeSegment).join(':');
}

/** The object form of a three-segment key, or `undefined` for keys of another shape. */
export function parseSessionKey(key: string): SessionKeyObject | undefined {
  const segments = key.split(':');
  if (segments.length !== 3 || segments.some((segment) => segment === '')) return undefined;
  const [tenantId = '', channelId = '', userId = ''] = segments.map(decodeSegment);
  return { tenantId, channelId, userId };
}
