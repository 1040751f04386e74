import { defineConfig } from 'tsup';
import { preset } from '../../tooling/tsup.preset.js';
// `testing` holds sample evidence for the tests of packages that read evidence files; `audit` is
// the audit room (`@agentd/evidence/audit`).
export default defineConfig(preset({ entry: ['src/index.ts', 'src/testing.ts', 'src/audit/index.ts'] }));
