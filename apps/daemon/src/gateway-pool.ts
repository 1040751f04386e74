import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketTransport } from '@agentd/rpc-core';

/** One build of the gateway: a WebSocket transport and an HTTP handler made with one set of limits. */
export interface GatewayGeneration {
  ws: WebSocketTransport;
  http: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
}

/**
 * The gateway as the server sees it: `ws` and `http` route to the newest generation, while
 * notifications, `closeWhere` and `close` reach every generation that still holds sockets.
 */
export interface GatewayPool<G extends GatewayGeneration = GatewayGeneration> {
  /** The newest generation (what new connections and requests get). */
  readonly current: G;
  readonly ws: WebSocketTransport;
  http(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
  /**
   * Builds a new generation for new connections and HTTP requests (changed limits or heartbeat);
   * sockets of older generations keep the limits they connected with until they close.
   */
  renew(): void;
  /** Builds a new generation and closes every socket of the older ones with 1001 (`gateway.restart`). */
  replace(): Promise<void>;
}

/** Creates the pool with a first generation from `build`; `build` is called again by `renew` and `replace`. */
export function createGatewayPool<G extends GatewayGeneration>(build: () => G): GatewayPool<G> {
  let current = build();
  // Older generations still serving sockets opened before a renew.
  let retiring: G[] = [];
  const all = (): GatewayGeneration[] => [current, ...retiring];
  const sum = (count: (generation: GatewayGeneration) => number): number =>
    all().reduce((total, generation) => total + count(generation), 0);
  /** Closes retired generations whose last socket has gone (stops their heartbeat and ping timers). */
  const prune = (): void => {
    const empty = retiring.filter((generation) => generation.ws.connectionCount === 0);
    if (empty.length === 0) return;
    retiring = retiring.filter((generation) => !empty.includes(generation));
    for (const generation of empty) void generation.ws.close();
  };
  const ws: WebSocketTransport = {
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer) {
      prune();
      current.ws.handleUpgrade(request, socket, head);
    },
    notify: (clientId, method, params) => sum((generation) => generation.ws.notify(clientId, method, params)),
    broadcast: (method, params) => sum((generation) => generation.ws.broadcast(method, params)),
    notifyWhere: (predicate, method, params) =>
      sum((generation) => generation.ws.notifyWhere(predicate, method, params)),
    closeWhere: (predicate, code, reason) =>
      sum((generation) => generation.ws.closeWhere(predicate, code, reason)),
    get connectionCount() {
      return sum((generation) => generation.ws.connectionCount);
    },
    async close() {
      await Promise.all(all().map((generation) => generation.ws.close()));
    },
  };
  return {
    get current() {
      return current;
    },
    ws,
    http: (req, res) => current.http(req, res),
    renew() {
      retiring.push(current);
      current = build();
      prune();
    },
    async replace() {
      const old = all();
      current = build();
      retiring = [];
      await Promise.all(old.map((generation) => generation.ws.close()));
    },
  };
}
