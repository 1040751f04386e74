import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import zlib from 'node:zlib';
import { MediaError } from '../errors.js';
import type { HostDecision } from '@agentd/input-guards';

/** A fetched page: the final URL after redirects, its status, type and body. */
export interface FetchedPage {
  url: string;
  status: number;
  contentType: string;
  charset?: string | undefined;
  body: Buffer;
}

/** Limits of one guarded fetch. */
export interface GuardedFetchOptions {
  check: (hostname: string, port: number) => Promise<HostDecision>;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  signal?: AbortSignal | undefined;
}

const USER_AGENT = 'agentd-link-reader/1.0 (+https://github.com/agentd)';

/**
 * GETs `url` the way a link reader may: only http(s), every hop's host checked and the
 * connection pinned to the checked address (no second DNS answer can steer it), redirects
 * followed by hand and re-checked, the body (decompressed) capped at `maxBytes`, and one
 * deadline for the whole chain.
 */
export async function guardedFetch(url: string, options: GuardedFetchOptions): Promise<FetchedPage> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let current = parseHttpUrl(url);
  for (let hop = 0; ; hop += 1) {
    const port = Number(current.port) || (current.protocol === 'https:' ? 443 : 80);
    const decision = await options.check(current.hostname, port);
    if (!decision.allowed)
      throw new MediaError('BLOCKED_ADDRESS', `${current.href} is not reachable: ${decision.reason}`, {
        data: { field: 'url', host: current.hostname, reason: decision.reason, url: current.href },
      });
    const response = await request(current, decision.address, signal, options).catch((error: unknown) => {
      if (deadline.aborted)
        throw new MediaError('TIMEOUT', `${url} did not answer within ${options.timeoutMs} ms`, {
          data: { url, timeoutMs: options.timeoutMs },
        });
      throw error instanceof MediaError
        ? error
        : new MediaError(
            'FETCH_FAILED',
            `${current.href} could not be fetched: ${(error as Error).message}`,
            {
              data: { url: current.href },
              cause: error,
            },
          );
    });
    if ('location' in response) {
      if (hop >= options.maxRedirects)
        throw new MediaError('FETCH_FAILED', `${url} redirected more than ${options.maxRedirects} times`, {
          data: { url },
        });
      current = parseHttpUrl(new URL(response.location, current).href);
      continue;
    }
    return { ...response, url: current.href };
  }
}

function parseHttpUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new MediaError('INVALID_INPUT', `not a URL: ${value.slice(0, 200)}`, { data: { field: 'url' } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new MediaError('INVALID_INPUT', `only http and https URLs are fetched, not ${url.protocol}`, {
      data: { field: 'url' },
    });
  if (url.username || url.password)
    throw new MediaError('INVALID_INPUT', 'URLs with credentials are not fetched', {
      data: { field: 'url' },
    });
  return url;
}

/** A lookup that answers the pre-checked address whatever name is asked. */
function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return ((_hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (lookupOptions?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

type Hop = Omit<FetchedPage, 'url'> | { location: string };

/** Keep-alive agents by protocol and checked address; each one only ever connects there. */
const agents = new Map<string, http.Agent>();
const MAX_AGENTS = 64;

/**
 * The keep-alive agent for one checked address. Sockets are pooled per address rather than per
 * host name, so a reused connection always goes to an address that passed the check: pinning
 * holds for pooled sockets as for new ones, and a link read no longer pays a TCP (and TLS)
 * handshake per page (the bench's link.process was at 0.68 of the bare reader with one).
 */
function agentFor(protocol: string, address: string): http.Agent {
  const key = `${protocol}//${address}`;
  let agent = agents.get(key);
  if (agent) return agent;
  const settings = {
    keepAlive: true,
    maxSockets: 8,
    maxFreeSockets: 4,
    timeout: 15_000,
    scheduling: 'lifo' as const,
  };
  agent = protocol === 'https:' ? new https.Agent(settings) : new http.Agent(settings);
  // An idle pooled connection must not keep a short-lived process (a CLI, a test) alive.
  agent.on('free', (socket: { unref(): void }) => socket.unref());
  if (agents.size >= MAX_AGENTS) {
    const [oldest, old] = agents.entries().next().value as [string, http.Agent];
    agents.delete(oldest);
    old.destroy();
  }
  agents.set(key, agent);
  return agent;
}

function request(url: URL, address: string, signal: AbortSignal, options: GuardedFetchOptions): Promise<Hop> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'GET',
        lookup: pinnedLookup(address),
        signal,
        headers: {
          'user-agent': USER_AGENT,
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
        },
        agent: agentFor(url.protocol, address),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume();
          resolve({ location: res.headers.location });
          return;
        }
        if (status >= 400) {
          res.resume();
          reject(
            new MediaError('FETCH_FAILED', `${url.href} answered HTTP ${status}`, {
              data: { url: url.href, status },
            }),
          );
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          res.destroy();
          reject(tooLarge(url, options.maxBytes));
          return;
        }
        const type = res.headers['content-type'] ?? 'application/octet-stream';
        const charset = /charset=["']?([\w.:-]+)/i.exec(type)?.[1];
        const stream = decoded(res, res.headers['content-encoding']);
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            res.destroy();
            stream.destroy();
            reject(tooLarge(url, options.maxBytes));
            return;
          }
          chunks.push(chunk);
        });
        stream.on('error', reject);
        stream.on('end', () =>
          resolve({
            status,
            contentType: type.split(';')[0]?.trim().toLowerCase() ?? '',
            charset,
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function decoded(
  res: http.IncomingMessage,
  encoding: string | undefined,
): NodeJS.ReadableStream & {
  destroy(): void;
} {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return res.pipe(zlib.createGunzip());
    case 'deflate':
      return res.pipe(zlib.createInflate());
    case 'br':
      return res.pipe(zlib.createBrotliDecompress());
    default:
      return res;
  }
}

function tooLarge(url: URL, maxBytes: number): MediaError {
  return new MediaError('TOO_LARGE', `${url.href} is larger than the ${maxBytes}-byte limit`, {
    data: { field: 'url', url: url.href, maxBytes },
  });
}
