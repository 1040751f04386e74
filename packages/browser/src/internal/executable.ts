import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { BrowserError } from '../errors.js';

const candidatePaths: Record<string, string[]> = {
  linux: [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/google-chrome',
    '/snap/bin/chromium',
    '/opt/google/chrome/chrome',
  ],
  darwin: [
    '/Applications/Chromium.app/Contents/MacOS/Chromium',
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  ],
};

const candidateNames = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome', 'chrome'];

// Headless flags a locked-down machine (root, no GPU, no network beyond what is allowed) needs.
// The background-networking set keeps Chromium from calling home on a closed network. The
// benchmark's bare-Playwright baseline launches with the same flags.
export const HEADLESS_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export const installHint =
  'Install Chromium (Debian/Ubuntu: `apt-get install -y chromium`; Fedora: `dnf install chromium`; ' +
  'macOS: `brew install --cask chromium`) or set `browser.executablePath` to a Chromium or Chrome binary.';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The browser to launch: the configured one (which must exist), else the first system
 * Chromium/Chrome in the well-known locations, else the first one on `PATH`.
 *
 * @throws {BrowserError} `NO_EXECUTABLE` with installation advice.
 */
export function findExecutable(configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (configured !== undefined) {
    if (isExecutable(configured)) return configured;
    throw new BrowserError(
      'NO_EXECUTABLE',
      `browser.executablePath ${configured} is not an executable file. ${installHint}`,
      { data: { executablePath: configured } },
    );
  }
  for (const path of candidatePaths[process.platform] ?? []) if (isExecutable(path)) return path;
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of candidateNames) {
      const path = join(dir, name);
      if (isExecutable(path)) return path;
    }
  }
  throw new BrowserError('NO_EXECUTABLE', `No Chromium or Chrome browser found. ${installHint}`);
}
