import NodeWebSocket from 'ws';
import type { WebSocketConstructor } from '../ws-client.js';

/**
 * The WebSocket of Node builds: `ws`, the one implementation that sends the
 * `Authorization` header on the upgrade (Node 20 has no global WebSocket).
 */
export const DefaultWebSocket: WebSocketConstructor = NodeWebSocket as unknown as WebSocketConstructor;

/** Where the token goes when the caller does not say: `ws` can send headers. */
export const defaultTokenLocation: 'header' | 'query' = 'header';
