import { z } from 'zod';

/** `telemetry.otlp`: where spans go. */
const otlpSchema = z
  .object({
    /**
     * The OTLP/HTTP traces endpoint, e.g. `http://127.0.0.1:4318/v1/traces`. Unset (the default)
     * turns tracing off, and none of the OpenTelemetry packages is loaded.
     */
    endpoint: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    /** Extra request headers (an API key of a hosted collector); values may be `${secret:NAME}`. */
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,128}$/), z.string().max(4096)).default({}),
    /** The `service.name` resource attribute. @default 'agentd' */
    serviceName: z.string().min(1).max(128).default('agentd'),
  })
  .strict();

/** The daemon's `telemetry` section. */
export const telemetrySectionSchema = z
  .object({
    otlp: otlpSchema.default(otlpSchema.parse({})),
  })
  .strict();

/** The parsed `telemetry` section. */
export type TelemetrySection = z.output<typeof telemetrySectionSchema>;
