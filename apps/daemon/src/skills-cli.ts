import { resolve } from 'node:path';
import { createConfigStore } from '@agentd/config-store';
import { skillNameSchema } from '@agentd/skills';
import { configSections } from './config-schema.js';
import { signalRunningDaemon } from './offline-token.js';

/** A command line `agentd skills` refuses (exit code 2). */
export class SkillsUsageError extends Error {}

/** The usage lines of `agentd skills`. */
export const SKILLS_USAGE = `usage:
  agentd skills remove NAME    (removes the imported skill and blocks its re-import)
  agentd skills unblock NAME   (allows skills.import of NAME again)`;

/**
 * `agentd skills remove|unblock <name>`: the contract has no removal method, so removal is
 * config-driven, like `agentd token create`: the name goes into (or out of)
 * `skills.import.blocked` in the data dir's config, and a daemon running there is sent SIGHUP.
 * The daemon applies the section (at once, or at its next start), removes the imported skill
 * and audits the removal (`skill_remove`, `reason: blocked`); the config change itself is in
 * the config audit. Blocking keeps a removed (say, compromised) skill from being imported
 * again until an operator unblocks it.
 */
export async function runSkillsCli(
  args: readonly string[],
  options: { dataDir: string; say?: (line: string) => void },
): Promise<number> {
  const say = options.say ?? ((line: string) => console.error(line));
  const [action, name, ...extra] = args;
  if ((action !== 'remove' && action !== 'unblock') || name === undefined || extra.length > 0)
    throw new SkillsUsageError(SKILLS_USAGE);
  const parsed = skillNameSchema.safeParse(name);
  if (!parsed.success) throw new SkillsUsageError(`invalid skill name: ${parsed.error.issues[0]?.message}`);
  const dataDir = resolve(options.dataDir);
  const store = createConfigStore({ dataDir, sections: configSections });
  await store.load();
  const section = store.get('skills') as { import: { blocked: string[] } };
  const blocked = section.import.blocked;
  const next =
    action === 'remove'
      ? blocked.includes(parsed.data)
        ? blocked
        : [...blocked, parsed.data]
      : blocked.filter((entry) => entry !== parsed.data);
  if (next.length !== blocked.length) await store.patch({ skills: { import: { blocked: next } } });
  const told = signalRunningDaemon(dataDir);
  const where = told
    ? 'the running daemon was told to reload'
    : 'a daemon already running on this data dir applies it on SIGHUP or restart';
  say(
    action === 'remove'
      ? `skill ${parsed.data} is in skills.import.blocked: its import is removed (audited) and re-imports are refused; ${where}.`
      : `skill ${parsed.data} is no longer blocked; ${where}.`,
  );
  return 0;
}
