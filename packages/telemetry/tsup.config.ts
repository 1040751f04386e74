import { defineConfig } from 'tsup';
import { preset } from '../../tooling/tsup.preset.js';
// Two entries: the config section, and the tracer that loads OpenTelemetry.
export default defineConfig(preset({ entry: ['src/index.ts', 'src/tracing.ts'] }));
