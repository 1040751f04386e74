import { BODY_LIMIT } from '@agentd/input-guards';
import { z } from 'zod';
import { originOf } from './http-handler.js';

/** An MCP server id: its tools are named `<id>__<tool>`, so it is short and has no `__`. */
export const mcpServerIdSchema = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]|_(?!_)){0,30}$/,
    'lowercase letters, digits, - and single _, 1-31 characters',
  );

const common = {
  /** Whether agents get this server's tools. @default true */
  enabled: z.boolean().default(true),
  /** Agents that may use its tools (ids or `*`); the agent's own tool allow-list applies too. @default ['*'] */
  agents: z.array(z.string().min(1).max(64)).max(256).default(['*']),
  /** `lazy`: connect on the first call (its tools are listed once it is up); `eager`: at start. @default 'eager' */
  start: z.enum(['lazy', 'eager']).default('eager'),
  /** Longest one tool call may take, in ms. @default 60000 */
  callTimeoutMs: z.number().int().min(100).max(3_600_000).default(60_000),
  /** Longest connecting (spawn and handshake) may take, in ms. @default 15000 */
  connectTimeoutMs: z.number().int().min(100).max(300_000).default(15_000),
};

/** A server agentd spawns and speaks to over stdio. `env` values may be `${secret:NAME}` references. */
export const mcpStdioServerSchema = z
  .object({
    command: z.string().min(1).max(4096),
    args: z.array(z.string().max(65_536)).max(1024).default([]),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(65_536)).default({}),
    cwd: z.string().min(1).max(4096).optional(),
    ...common,
  })
  .strict();

/** A server reached over Streamable HTTP. `headers` values may be `${secret:NAME}` references. */
export const mcpHttpServerSchema = z
  .object({
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,128}$/), z.string().max(65_536)).default({}),
    ...common,
  })
  .strict();

/** One `mcp.servers.<id>` entry. */
export const mcpServerEntrySchema = z.union([mcpStdioServerSchema, mcpHttpServerSchema]);

/** A parsed `mcp.servers.<id>` entry. */
export type McpServerEntry = z.output<typeof mcpServerEntrySchema>;

/** `mcp.serve`: the MCP server agentd serves at `/mcp`. */
const serveSchema = z
  .object({
    /** Serve `/mcp`. @default true */
    enabled: z.boolean().default(true),
    /** Largest request body in bytes. @default 1048576 */
    maxBodyBytes: z.number().int().min(BODY_LIMIT.min).max(BODY_LIMIT.max).default(BODY_LIMIT.default),
    /**
     * Browser origins (`https://app.example.com`, `http://localhost:5173`) allowed to call
     * `/mcp`; a request with another `Origin` answers 403. Clients that send no `Origin`
     * (CLIs, servers) are not affected. @default []
     */
    allowedOrigins: z
      .array(
        z
          .string()
          .max(2048)
          .refine((value) => originOf(value) === value.replace(/\/$/, '').toLowerCase(), {
            message: 'an origin: scheme://host[:port], no path',
          }),
      )
      .max(256)
      .default([]),
  })
  .strict();

/**
 * The daemon's `mcp` section: the MCP server agentd serves at `/mcp` (`serve`) and the MCP
 * servers whose tools agents use (`servers`).
 */
export const mcpSectionSchema = z
  .object({
    serve: serveSchema.default(serveSchema.parse({})),
    servers: z.record(mcpServerIdSchema, mcpServerEntrySchema).default({}),
  })
  .strict();

/** The parsed `mcp` section. */
export type McpSection = z.output<typeof mcpSectionSchema>;
