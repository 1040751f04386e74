import { preset } from '../../tooling/vitest.preset.js';
export default preset('daemon', { testTimeout: 30_000 });
