import { defineConfig } from 'vite';
import { bundleBudget } from './build/bundle-budget.js';

/** Gzipped JavaScript the first page may load (the entry chunk and its static imports). */
export const FIRST_PAGE_BUDGET_BYTES = 250 * 1024;

export default defineConfig({
  // Served by the daemon at `/`; every asset is a file under /assets/ (no inline script or
  // style, so the page runs under a CSP of 'self' only).
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: { polyfill: false },
  },
  plugins: [bundleBudget({ budgetBytes: FIRST_PAGE_BUDGET_BYTES })],
});
