import { build } from 'vite';

/**
 * Vitest global setup: builds the console once into `dist/` (the files the daemon serves),
 * with the same config as `pnpm build`, so the browser tests drive what ships.
 */
export default async function setup(): Promise<void> {
  await build({ root: new URL('..', import.meta.url).pathname, logLevel: 'warn' });
}
