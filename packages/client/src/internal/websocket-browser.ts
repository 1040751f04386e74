import type { WebSocketConstructor } from '../ws-client.js';

/**
 * The WebSocket of browser builds (chosen through the `browser` condition of
 * `#websocket` in package.json): the page's own, so `ws` is never bundled.
 */
export const DefaultWebSocket: WebSocketConstructor = globalThis.WebSocket as unknown as WebSocketConstructor;

/** A browser WebSocket cannot set headers, so the token goes in the `token` query parameter. */
export const defaultTokenLocation: 'header' | 'query' = 'query';
