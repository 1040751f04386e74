import { firstIssueText } from '@agentd/errors';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { SkillsError } from './errors.js';

/** Longest `SKILL.md` read (bytes); a larger one is a load error, not a truncated skill. */
export const MAX_SKILL_MD_BYTES = 256 * 1024;

/** A skill name: lower-case letters, digits, `-` and `_`, as folder names and tool prompts carry it. */
export const skillNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9_-]*$/, 'lower-case letters, digits, - and _ only');

const toolListSchema = z.array(z.string().min(1).max(128)).max(64);

const frontMatterSchema = z
  .looseObject({
    name: skillNameSchema,
    description: z.string().min(1).max(1024),
    version: z.union([z.string().min(1).max(64), z.number()]).optional(),
    // The formats in use name the tool list differently; all mean "the tools this skill needs".
    tools: toolListSchema.optional(),
    'allowed-tools': toolListSchema.optional(),
    'required-tools': toolListSchema.optional(),
    /** Files of the skill that may be executable (anything else with an exec bit is refused on import). */
    executables: z.array(z.string().min(1).max(512)).max(64).optional(),
  })
  .refine(
    (value) => [value.tools, value['allowed-tools'], value['required-tools']].filter(Boolean).length <= 1,
    {
      message: 'name the required tools once (tools, allowed-tools or required-tools)',
    },
  );

/** A parsed `SKILL.md`. */
export interface ParsedSkill {
  name: string;
  description: string;
  /** `version` of the front matter, as a string; absent when not given. */
  version?: string;
  /** The tools the skill needs: its permission manifest. */
  requiredTools: string[];
  /** Files the skill declares executable (paths relative to the skill folder). */
  executables: string[];
  /** The Markdown after the front matter. */
  body: string;
}

const FRONT_MATTER = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/**
 * Parses a `SKILL.md`: YAML front matter between `---` lines (name, description, version, the
 * tools it needs) and a Markdown body.
 * @throws {SkillsError} `INVALID_SKILL` naming what is wrong (missing front matter, bad YAML, a field).
 */
export function parseSkillMd(text: string): ParsedSkill {
  if (Buffer.byteLength(text) > MAX_SKILL_MD_BYTES) {
    throw new SkillsError('INVALID_SKILL', `SKILL.md is larger than ${MAX_SKILL_MD_BYTES} bytes`);
  }
  const match = FRONT_MATTER.exec(text);
  if (!match) throw new SkillsError('INVALID_SKILL', 'SKILL.md has no YAML front matter between --- lines');
  let data: unknown;
  try {
    // Aliases are refused outright: a front matter has no use for them and they amplify input.
    data = parseYaml(match[1] ?? '', { maxAliasCount: 0, prettyErrors: false });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : 'unreadable';
    throw new SkillsError('INVALID_SKILL', `SKILL.md front matter is not valid YAML: ${reason}`);
  }
  const parsed = frontMatterSchema.safeParse(data ?? {});
  if (!parsed.success) {
    throw new SkillsError('INVALID_SKILL', firstIssueText('SKILL.md ', parsed.error.issues, 'front matter'));
  }
  const front = parsed.data;
  const skill: ParsedSkill = {
    name: front.name,
    description: front.description.trim(),
    requiredTools: [...new Set(front.tools ?? front['allowed-tools'] ?? front['required-tools'] ?? [])],
    executables: front.executables ?? [],
    body: text.slice(match[0].length).trim(),
  };
  if (front.version !== undefined) skill.version = String(front.version);
  return skill;
}
