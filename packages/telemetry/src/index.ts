// The config section only: the tracer and the OpenTelemetry packages are in `@agentd/telemetry/tracing`,
// imported by whoever turns tracing on, so importing this entry loads none of them.
export { type TelemetrySection, telemetrySectionSchema } from './config.js';
