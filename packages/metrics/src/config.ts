import { z } from 'zod';

/** `host:port`, the host a name, an IPv4 address or a bracketed IPv6 address. */
const listenAddress = z
  .string()
  .max(300)
  .regex(/^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'host:port (an IPv6 host in brackets)')
  .refine((value) => {
    const port = Number(value.slice(value.lastIndexOf(':') + 1));
    return port >= 1 && port <= 65_535;
  }, 'a port from 1 to 65535');

/** The daemon's `metrics` section. */
export const metricsSectionSchema = z
  .object({
    /** Serve `GET /metrics` (behind an `admin` token on the gateway). @default true */
    enabled: z.boolean().default(true),
    /**
     * Also serve `GET /metrics` without a token on this separate `host:port`, for a Prometheus
     * on a private network; unset serves it on the gateway only.
     */
    listen: listenAddress.optional(),
  })
  .strict();

/** The parsed `metrics` section. */
export type MetricsSection = z.output<typeof metricsSectionSchema>;

/** Host and port of a `listen` address. */
export function parseListenAddress(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(address.slice(colon + 1)) };
}
