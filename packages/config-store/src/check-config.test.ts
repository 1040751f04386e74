import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseConfigText } from './check-config.js';
import { ConfigStoreError } from './errors.js';

const sections = {
  gateway: {
    schema: z
      .object({ port: z.number().int().default(7420), host: z.string().default('127.0.0.1') })
      .strict(),
  },
};

describe('parseConfigText', () => {
  it('answers the config with every default, as a store would load it', () => {
    expect(parseConfigText('gateway:\n  port: 8080\n', sections)).toEqual({
      gateway: { port: 8080, host: '127.0.0.1' },
    });
  });

  it('throws CONFIG_INVALID naming the field, the unknown section and bad YAML', () => {
    const issues = (text: string) => {
      try {
        parseConfigText(text, sections, '/data/config.yaml');
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigStoreError);
        expect((error as ConfigStoreError).code).toBe('CONFIG_INVALID');
        return (error as ConfigStoreError).message;
      }
      throw new Error('no error');
    };
    expect(issues('gateway:\n  port: nope\n')).toContain('gateway.port');
    expect(issues('gatway: {}\n')).toContain('gatway');
    expect(issues('gateway: [\n')).toContain('not valid YAML');
  });

  it('touches no file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-check-'));
    try {
      parseConfigText('{}', sections, join(dir, 'config.yaml'));
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
