import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Reads a request body whole. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Parses a JSON, urlencoded or multipart body into a plain record (files become `{filename, size}`). */
export async function parseBody(req: IncomingMessage, body: Buffer): Promise<Record<string, unknown>> {
  const type = req.headers['content-type'] ?? '';
  if (body.length === 0) return {};
  if (type.includes('application/json')) return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  if (type.includes('multipart/form-data')) return parseMultipart(body, type);
  if (type.includes('application/x-www-form-urlencoded')) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of new URLSearchParams(body.toString('utf8'))) out[key] = parseMaybeJson(value);
    return out;
  }
  return { raw: body.toString('utf8') };
}

function parseMaybeJson(value: string): unknown {
  if (!/^[[{]/.test(value)) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** A listening local HTTP server and its base URL. */
export async function listenLocal(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    server,
    url,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * What every fake platform API offers a test: the base URL to configure, each call it received
 * (oldest first) and `of(key)`, the calls one key names (a Web API method, or a pattern over
 * `METHOD path`), and close.
 */
export interface FakeApi<TCall, TKey> {
  /** The `apiBaseUrl` to configure. */
  url: string;
  calls: TCall[];
  /** The calls `key` names. */
  of(key: TKey): TCall[];
  close(): Promise<void>;
}

/** A scripted failure: the next `times` calls matching answer this instead. */
export interface Failure {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  times: number;
}

/**
 * A small multipart/form-data reader (undici's is stricter than some clients' framing):
 * fields become strings (JSON parsed), files `{filename, size, type}`.
 */
function parseMultipart(body: Buffer, contentType: string): Record<string, unknown> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const marker = `--${boundary?.[1] ?? boundary?.[2] ?? ''}`;
  const out: Record<string, unknown> = {};
  for (const part of body.toString('latin1').split(marker)) {
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) continue;
    const head = part.slice(0, split);
    const content = part.slice(split + 4).replace(/\r\n$/, '');
    const name = /[;\s]name="?([^";\r\n]*)"?/.exec(head)?.[1];
    if (!name) continue;
    const filename = /filename="?([^";\r\n]*)"?/.exec(head)?.[1];
    const fileType = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1];
    out[name] =
      filename === undefined
        ? parseMaybeJson(Buffer.from(content, 'latin1').toString('utf8'))
        : { filename, size: Buffer.byteLength(content, 'latin1'), type: fileType };
  }
  return out;
}
