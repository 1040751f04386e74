import { MediaError } from '../errors.js';

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const DATA_URI = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+)?(?:;[a-z0-9=.-]+)*;base64,/i;

/** Bytes decoded from a caller's base64, with the MIME type a data URI declared. */
export interface DecodedInput {
  bytes: Buffer;
  declaredMime?: string | undefined;
}

/**
 * Decodes base64 (plain or a `data:` URI) from the parameter `field`, refusing an empty or
 * malformed value and, before decoding anything, one whose decoded size would pass `maxBytes`.
 */
export function decodeBase64(value: string, field: string, maxBytes: number): DecodedInput {
  let body = value;
  let declaredMime: string | undefined;
  const uri = DATA_URI.exec(value);
  if (uri) {
    declaredMime = uri[1]?.toLowerCase();
    body = value.slice(uri[0].length);
  }
  body = body.replace(/\s+/g, '');
  const estimated = Math.floor((body.length * 3) / 4);
  if (estimated > maxBytes + 2)
    throw new MediaError('TOO_LARGE', `${field} is larger than the ${maxBytes}-byte limit`, {
      data: { field, maxBytes },
    });
  if (body.length === 0 || !BASE64.test(body))
    throw new MediaError('INVALID_INPUT', `${field} is not base64 data`, { data: { field } });
  const bytes = Buffer.from(body, body.includes('-') || body.includes('_') ? 'base64url' : 'base64');
  if (bytes.length === 0) throw new MediaError('INVALID_INPUT', `${field} is empty`, { data: { field } });
  if (bytes.length > maxBytes)
    throw new MediaError('TOO_LARGE', `${field} is larger than the ${maxBytes}-byte limit`, {
      data: { field, maxBytes },
    });
  return { bytes, declaredMime };
}
