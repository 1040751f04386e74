import { resolve } from 'node:path';
import { createConfigStore } from '@agentd/config-store';
import { configSections } from './config-schema.js';
import { CONSOLE_LOGIN_TTL_MS, CONSOLE_SESSION_TTL_MS, createConsoleLoginCode } from './console-login.js';
import { readDaemonAddress } from './daemon-address.js';

/**
 * `agentd console`: prints the web console's URL and a one-time login link for the local user
 * (whoever can write the data dir). The link carries the code in the URL fragment, which the
 * browser never sends to a server; the console exchanges it once for a token. The URL comes
 * from `url` (the CLI passes `--url` or `$AGENTD_URL`), else from the address the daemon running
 * on the data dir recorded (`agentd.address.json`: where it really listens, whatever `--port` or
 * port 0 it was started with), else from the data dir's `gateway.host` and `gateway.port`.
 */
export async function runConsoleCli(options: {
  dataDir: string;
  url?: string | undefined;
  print: (line: string) => void;
}): Promise<number> {
  const dataDir = resolve(options.dataDir);
  let base = options.url;
  if (!base) {
    let gateway: { host: string; port: number } | undefined = readDaemonAddress(dataDir);
    if (!gateway) {
      const store = createConfigStore({ dataDir, sections: configSections });
      await store.load();
      gateway = store.get('gateway') as { host: string; port: number };
    }
    // A daemon listening on every interface is still reached locally on the loopback address.
    const host = gateway.host === '0.0.0.0' || gateway.host === '::' ? '127.0.0.1' : gateway.host;
    base = `http://${host.includes(':') ? `[${host}]` : host}:${gateway.port}`;
  }
  const url = new URL('/', base).href;
  const code = createConsoleLoginCode(dataDir);
  options.print(`agentd console: ${url}`);
  options.print(
    `One-time login link (works once, for ${CONSOLE_LOGIN_TTL_MS / 60_000} minutes; it signs in with an admin session token that ends at logout or after ${CONSOLE_SESSION_TTL_MS / 3_600_000} hours without use):`,
  );
  options.print(`  ${url}#login=${code}`);
  return 0;
}
