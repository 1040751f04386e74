/** Defaults from decisions.md: loopback only, port 7420. Kept apart so the CLI can read them cheaply. */
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7420;
