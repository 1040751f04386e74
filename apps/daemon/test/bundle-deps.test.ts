import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const manifest = (path: string) =>
  JSON.parse(readFileSync(path, 'utf8')) as { dependencies?: Record<string, string> };

describe('the bundled daemon', () => {
  // tsup bundles the workspace packages into dist/ and keeps npm packages external, so the built
  // daemon (what `pnpm start` runs) resolves each package's npm dependencies from its own
  // package.json: one missing there fails at start, or at first use for a lazily loaded one.
  it("lists every workspace package's npm dependency among its own dependencies", () => {
    const daemon = manifest(join(root, 'apps', 'daemon', 'package.json')).dependencies ?? {};
    const missing: string[] = [];
    for (const name of readdirSync(join(root, 'packages'))) {
      const dependencies = manifest(join(root, 'packages', name, 'package.json')).dependencies ?? {};
      for (const dependency of Object.keys(dependencies)) {
        if (!dependency.startsWith('@agentd/') && !(dependency in daemon))
          missing.push(`${dependency} (${name})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
