import { z } from 'zod';

/**
 * The `secrets` config section. The master key itself never goes into config: it comes from
 * `AGENTD_MASTER_KEY` or from the file named here.
 */
export const secretsSectionSchema = z
  .object({
    /**
     * Path of a file holding the master key as hex or base64 (at least 32 bytes); refused unless
     * it is owner-only (0600). `AGENTD_MASTER_KEY` wins when both are set. Without either,
     * secrets are written to `<data dir>/.env` (mode 0600) in plain text.
     */
    masterKeyFile: z.string().min(1).optional(),
  })
  .strict();

/** The parsed `secrets` config section. */
export type SecretsSection = z.output<typeof secretsSectionSchema>;
