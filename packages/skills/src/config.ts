import { z } from 'zod';
import { skillNameSchema } from './skill-md.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/** A size in bytes (a positive integer), `fallback` when unset. */
const byteSize = (fallback: number) => z.number().int().positive().default(fallback);

/** Caps of a scan (`skills.import.limits`). */
export const scanLimitsSchema = z
  .object({
    /** Largest single file (bytes). @default 262144 */
    maxFileBytes: byteSize(256 * KiB),
    /** Largest unpacked skill (bytes). @default 2097152 */
    maxTotalBytes: byteSize(2 * MiB),
    /** Most files in a skill. @default 200 */
    maxFiles: z.number().int().positive().default(200),
  })
  .strict();

/** Parsed scan caps. */
export type ScanLimits = z.infer<typeof scanLimitsSchema>;

/** Trust tiers of a registry: what an operator vouches for its skills. */
export const REGISTRY_TRUST = ['verified', 'community', 'untrusted'] as const;

/** One allowed registry (`skills.import.registries[]`). */
export const registrySchema = z
  .object({
    /** Name callers give `skills.import {registry}`. */
    id: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/),
    /** Base URL (http or https); archives are fetched from `<base>/<name>/<version>.tar.gz`. */
    base: z.url({ protocol: /^https?$/ }).max(2048),
    /** Wire format of the registry. `tarball`: a gzip tarball per skill version. */
    kind: z.enum(['tarball']).default('tarball'),
    /** Trust tier recorded on every skill imported from it. */
    trust: z.enum(REGISTRY_TRUST).default('untrusted'),
  })
  .strict();

/** One allowed registry, parsed. */
export type RegistryConfig = z.infer<typeof registrySchema>;

/** `skills.import`: the registries skills may come from, the names refused, the fetch and scan caps. */
const importSchema = z
  .object({
    /** The only registries `skills.import` may fetch from (checked before any request). */
    registries: z
      .array(registrySchema)
      .max(64)
      .default([])
      .refine((list) => new Set(list.map((entry) => entry.id)).size === list.length, {
        message: 'registry ids must be unique',
      }),
    /**
     * Skill names that must not be installed: an imported skill of such a name is removed
     * (audited `skill_remove`) when the section is applied, and `skills.import` refuses it
     * before any request. `agentd skills remove <name>` adds a name here. @default []
     */
    blocked: z.array(skillNameSchema).max(256).default([]),
    /** Largest archive fetched (bytes). @default 4194304 */
    maxArchiveBytes: byteSize(4 * MiB),
    /** Fetch deadline (ms). @default 30000 */
    timeoutMs: z.number().int().positive().default(30_000),
    limits: scanLimitsSchema.default(scanLimitsSchema.parse({})),
  })
  .strict();

/** The `skills` config section. */
export const skillsSectionSchema = z
  .object({
    /** The daemon-wide skills directory; `<data dir>/skills/shared` when absent. */
    directory: z.string().min(1).max(4096).optional(),
    import: importSchema.default(importSchema.parse({})),
  })
  .strict();

/** The parsed `skills` section. */
export type SkillsSection = z.infer<typeof skillsSectionSchema>;
