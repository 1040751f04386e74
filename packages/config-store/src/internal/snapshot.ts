import { ConfigStoreError, type ConfigIssue } from '../errors.js';
import { type ConfigContext, describeIssues, type Snapshot, validate } from './config-context.js';
import { deepClone, isPlainObject } from './values.js';
import { parseYaml, syncDocument } from './yaml-document.js';

/**
 * A snapshot of YAML text (the file, or a file from history); throws
 * `errorCode` for bad YAML, a non-mapping, or (as `CONFIG_INVALID`) a config
 * that does not validate.
 */
export function snapshotFromText(
  ctx: ConfigContext,
  text: string,
  errorCode: 'CONFIG_INVALID' | 'VALIDATION',
  origin: string,
): Snapshot {
  const parsed = parseYaml(text);
  if (parsed.errors.length > 0) {
    const issues: ConfigIssue[] = parsed.errors.map((error) => ({
      path: [],
      pathText: '',
      message: `YAML syntax: ${error.message}`,
    }));
    throw new ConfigStoreError(errorCode, `${origin} is not valid YAML: ${describeIssues(issues)}`, {
      data: { issues },
    });
  }
  if (!isPlainObject(parsed.value)) {
    const issues: ConfigIssue[] = [
      { path: [], pathText: '', message: 'The config must be a mapping of sections' },
    ];
    throw new ConfigStoreError(errorCode, `${origin} is not a mapping of sections`, { data: { issues } });
  }
  try {
    return { text, document: parsed.document, raw: parsed.value, config: validate(ctx, parsed.value) };
  } catch (error) {
    if (error instanceof ConfigStoreError && error.code === 'VALIDATION' && errorCode !== 'VALIDATION') {
      const issues = (error.data?.issues ?? []) as ConfigIssue[];
      throw new ConfigStoreError(errorCode, `${origin} is invalid: ${describeIssues(issues)}`, {
        data: { issues, file: ctx.filePath },
      });
    }
    throw error;
  }
}

/** A snapshot of a plain config value, its YAML document updated in place so comments stay. */
export function snapshotFromRaw(ctx: ConfigContext, current: Snapshot, raw: unknown): Snapshot {
  if (!isPlainObject(raw)) {
    const issues: ConfigIssue[] = [{ path: [], pathText: '', message: 'Expected an object of sections' }];
    throw new ConfigStoreError('VALIDATION', 'Invalid config: expected an object of sections', {
      data: { issues },
    });
  }
  const config = validate(ctx, raw);
  const document = current.document.clone();
  syncDocument(document, raw);
  return { text: document.toString(), document, raw: deepClone(raw), config };
}
