export {
  type LoadedSkill,
  SkillFolderCache,
  type SkillInfo,
  type SkillSource,
  type SkillTrust,
  sha256,
} from './catalog.js';
export {
  REGISTRY_TRUST,
  type RegistryConfig,
  registrySchema,
  type ScanLimits,
  scanLimitsSchema,
  type SkillsSection,
  skillsSectionSchema,
} from './config.js';
export { isSkillsError, SkillsError, type SkillsErrorCode, type SkillsErrorOptions } from './errors.js';
export { fetchArchive, installSkill, type VettedSkill, vetArchive } from './importer.js';
export type { SkillsAudit, SkillsAuditEvent } from './internal/audit.js';
export {
  type ManifestGate,
  type ManifestGateCall,
  type ManifestGateVerdict,
  ManifestLedger,
} from './manifest-gate.js';
export {
  type ScanFinding,
  type ScanRule,
  scanSkillFiles,
  type SkillFile,
} from './scan.js';
export { MAX_SKILL_MD_BYTES, type ParsedSkill, parseSkillMd, skillNameSchema } from './skill-md.js';
export {
  createSkillsService,
  type ImportResult,
  importParamsSchema,
  SKILL_READ_TOOL,
  type SkillBody,
  type SkillsService,
  type SkillsServiceOptions,
  workspaceSkillsDir,
} from './skills-service.js';
