import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { noopSecurityAudit } from './security-audit.js';
import { CONFIG_AUDIT_FILE, createConfigAudit } from './config-audit.js';
import { tempDirEachTest } from '../testing.js';

const temp = tempDirEachTest('config-audit-', { beforeEach, afterEach });

describe('createConfigAudit', () => {
  it('takes a new directory and copy count in place (applyOptions)', async () => {
    const logDir = join(temp.path, 'logs');
    const audit = createConfigAudit({
      logDir,
      maxSizeBytes: 200,
      maxFiles: 5,
      compress: false,
      audit: noopSecurityAudit,
      sections: ['graph'],
    });
    const change = (n: number) =>
      audit.record({ method: 'config.patch', sections: ['graph'], sha: `sha-${n}`, outcome: 'success' });
    audit.applyOptions({ maxFiles: 1 });
    for (let n = 0; n < 10; n++) change(n);
    const moved = join(temp.path, 'elsewhere');
    audit.applyOptions({ logDir: moved });
    change(10);
    await audit.close();
    expect(readdirSync(logDir).sort()).toEqual([CONFIG_AUDIT_FILE, `${CONFIG_AUDIT_FILE}.1`]);
    expect(audit.filePath).toBe(join(moved, CONFIG_AUDIT_FILE));
    expect(readFileSync(audit.filePath, 'utf8')).toContain('"sha":"sha-10"');
  });
});
