import { defineConfig } from 'tsup';
import { preset } from '../../tooling/tsup.preset.js';
export default defineConfig(preset());
