import { createTwoFilesPatch } from 'diff';
import { stringify } from 'yaml';
import { redactConfig } from '../redaction.js';
import { parseYaml } from './yaml-document.js';

/** What a revision that does not parse shows instead of its text (which could hold a secret). */
export const UNPARSEABLE_REVISION = '# this revision is not valid YAML: its text is not shown\n';

/**
 * A revision of config.yaml as `config.diff` may show it: parsed with `yaml`, redacted by
 * `redactConfig` (the rule of `config.read`), and written back as YAML. Comments and layout
 * do not survive (a comment can hold a credential as well as a value can); a missing file is
 * empty text and a file that does not parse is {@link UNPARSEABLE_REVISION}.
 */
export function redactedRevision(text: string | undefined): string {
  if (text === undefined || text.trim() === '') return '';
  const parsed = parseYaml(text);
  if (parsed.errors.length > 0) return UNPARSEABLE_REVISION;
  return stringify(redactConfig(parsed.value), { lineWidth: 0 });
}

/**
 * The unified diff (`--- a/<file>`, `+++ b/<file>`, hunks with three lines of context) of two
 * revisions of the config file, each redacted as a whole tree before any line is compared:
 * no credential can reach the answer through a hunk that cuts a block scalar or a flow
 * mapping. Empty when the redacted revisions are equal.
 */
export function redactedDiff(
  fileName: string,
  before: string | undefined,
  after: string | undefined,
): string {
  const old = redactedRevision(before);
  const next = redactedRevision(after);
  if (old === next) return '';
  return createTwoFilesPatch(`a/${fileName}`, `b/${fileName}`, old, next, undefined, undefined, {
    context: 3,
    headerOptions: { includeIndex: false, includeUnderline: false, includeFileHeaders: true },
  });
}
