import { describe, expect, it } from 'vitest';
import { redactedDiff, redactedRevision, UNPARSEABLE_REVISION } from './redacted-diff.js';

const secret = 'sk-live-0123456789abcdef';

describe('redactedRevision', () => {
  it('redacts the whole tree as config.read does: block scalars, flow maps, header maps, URLs', () => {
    const text = [
      '# old key: sk-in-a-comment',
      'gateway:',
      `  tokens: [{ id: a, token: "${secret}", scopes: ["*"] }]`,
      'providers:',
      '  entries:',
      '    p:',
      '      privateKey: |',
      `        ${secret}`,
      '        -----END KEY-----',
      `      baseUrl: https://user:${secret}@llm.example/v1`,
      '      password: ${secret:DB_PASSWORD}',
      '      headers:',
      `        X-Tenant-Secret-Header: ${secret}`,
      '        anthropic-version: 2023-06-01',
      '',
    ].join('\n');
    const shown = redactedRevision(text);
    expect(shown).not.toContain(secret);
    expect(shown).not.toContain('END KEY');
    expect(shown).not.toContain('sk-in-a-comment');
    expect(shown).toContain('token: "[REDACTED]"');
    expect(shown).toContain('privateKey: "[REDACTED]"');
    expect(shown).toContain('password: ${secret:DB_PASSWORD}');
    expect(shown).toContain('anthropic-version: 2023-06-01');
    expect(shown).toContain('https://[REDACTED]@llm.example/v1');
  });

  it('shows no text of a revision that does not parse, and nothing for a missing one', () => {
    expect(redactedRevision(`apiKey: ${secret}\n  bad: [indent`)).toBe(UNPARSEABLE_REVISION);
    expect(redactedRevision(undefined)).toBe('');
  });
});

describe('redactedDiff', () => {
  it('diffs the redacted revisions as a unified diff, empty when they are equal', () => {
    const before = 'daemon:\n  logLevel: info\nproviders:\n  entries:\n    p: { apiKey: old-key-1 }\n';
    const after = 'daemon:\n  logLevel: warn\nproviders:\n  entries:\n    p: { apiKey: new-key-2 }\n';
    const diff = redactedDiff('config.yaml', before, after);
    expect(diff.startsWith('--- a/config.yaml\n+++ b/config.yaml\n@@ ')).toBe(true);
    expect(diff).toContain('-  logLevel: info\n+  logLevel: warn');
    expect(diff).not.toMatch(/old-key-1|new-key-2/);
    // Only the secret changed: the redacted revisions are equal.
    expect(redactedDiff('config.yaml', before, before.replace('old-key-1', 'rotated'))).toBe('');
  });
});
