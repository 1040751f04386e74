import { DefaultWebSocket, defaultTokenLocation } from '#websocket';
import { type ClientLogger, silentLogger } from '../logger.js';
import type { ReconnectOptions, WebSocketConstructor } from '../ws-client.js';
import {
  readBoolean,
  readCount,
  readDuration,
  readEndpoint,
  readEnum,
  readFunction,
  readHeaders,
  readLogger,
  readOptionalString,
  requireRecord,
} from './options.js';

/** The WebSocket client's options, checked and with defaults filled in. */
export interface Settings {
  url: URL;
  headers: Record<string, string>;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  probeMethod: string | null;
  reconnect: Required<ReconnectOptions>;
  WebSocket: WebSocketConstructor;
  logger: ClientLogger;
  random: () => number;
}

/** Checks the options; throws `INVALID_OPTIONS` naming the first bad one. */
export function readSettings(input: unknown): Settings {
  const { options, url, token } = readEndpoint(input, ['ws:', 'wss:']);
  const tokenLocation = readEnum(
    options.tokenLocation,
    'tokenLocation',
    ['header', 'query'],
    defaultTokenLocation,
  );
  const headers = readHeaders(options.headers, 'headers');
  if (token !== undefined) {
    if (tokenLocation === 'query') url.searchParams.set('token', token);
    else headers.Authorization = `Bearer ${token}`;
  }
  let reconnectInput: Record<string, unknown> = {};
  if (typeof options.reconnect === 'boolean') reconnectInput = { enabled: options.reconnect };
  else if (options.reconnect !== undefined) reconnectInput = requireRecord(options.reconnect, 'reconnect');
  const reconnect = {
    enabled: readBoolean(reconnectInput.enabled, 'reconnect.enabled', true),
    initialDelayMs: readDuration(reconnectInput.initialDelayMs, 'reconnect.initialDelayMs', 250),
    maxDelayMs: readDuration(reconnectInput.maxDelayMs, 'reconnect.maxDelayMs', 10_000),
    maxAttempts: readCount(reconnectInput.maxAttempts, 'reconnect.maxAttempts', Number.POSITIVE_INFINITY),
  };
  let probeMethod: string | null = 'system.ping';
  if (options.probeMethod === null) probeMethod = null;
  else if (options.probeMethod !== undefined)
    probeMethod = readOptionalString(options.probeMethod, 'probeMethod')!;
  return {
    url,
    headers,
    requestTimeoutMs: readDuration(options.requestTimeoutMs, 'requestTimeoutMs', 30_000),
    connectTimeoutMs: readDuration(options.connectTimeoutMs, 'connectTimeoutMs', 10_000),
    probeMethod,
    reconnect,
    WebSocket: readFunction<WebSocketConstructor>(options.WebSocket, 'WebSocket', DefaultWebSocket),
    logger: readLogger<ClientLogger>(options.logger, 'logger', silentLogger),
    random: readFunction<() => number>(options.random, 'random', Math.random),
  };
}
