import { preset } from '../../tooling/vitest.preset.js';
export default preset('async-control');
