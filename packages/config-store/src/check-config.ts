import type { ConfigOf, ConfigSectionDefinition } from './config-store.js';
import { type ConfigContext, compileSections } from './internal/config-context.js';
import { snapshotFromText } from './internal/snapshot.js';

/**
 * Validates a config file's text against the section definitions exactly as a config store's
 * load does, without a store: nothing is read or written on disk (for `agentd doctor` and other
 * checks of a data dir another process owns). Answers the config with every default applied;
 * throws `ConfigStoreError` `CONFIG_INVALID` naming each issue (YAML syntax, not a mapping, a
 * field that does not validate).
 */
export function parseConfigText<Sections extends Record<string, ConfigSectionDefinition>>(
  text: string,
  sections: Sections,
  origin = 'config.yaml',
): ConfigOf<Sections> {
  const compiled = compileSections(sections as Parameters<typeof compileSections>[0]);
  const context = { ...compiled, filePath: origin } as ConfigContext;
  return snapshotFromText(context, text, 'CONFIG_INVALID', origin).config as ConfigOf<Sections>;
}
