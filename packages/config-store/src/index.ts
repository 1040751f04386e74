export {
  type ConfigChangeEvent,
  type ConfigChangeListener,
  type ConfigCommitAuthor,
  type ConfigGcResult,
  type ConfigGcStats,
  type ConfigHistoryEntry,
  type ConfigOf,
  type ConfigRollbackOptions,
  type ConfigRollbackResult,
  type ConfigSchemaResult,
  type ConfigSectionDefinition,
  type ConfigSetResult,
  type ConfigStore,
  type ConfigStoreLogger,
  type ConfigStoreOptions,
  type ConfigWriteOptions,
  type ConfigWriteResult,
  createConfigStore,
  type ErrorKind,
  type ProblemFields,
} from './config-store.js';
export {
  type ConfigIssue,
  ConfigStoreError,
  type ConfigStoreErrorCode,
  type ConfigStoreErrorOptions,
} from './errors.js';
export {
  CREDENTIAL_FIELD_NAMES,
  isCredentialFieldName,
  listPlaintextCredentials,
  REDACTED,
  redactConfig,
  redactUrlCredentials,
} from './redaction.js';
export {
  credentialSchema,
  isSecretRef,
  parseSecretRef,
  resolveSecretRefs,
  secretRefNames,
  type SecretLookup,
  secretRef,
  secretRefSchema,
} from './secret-refs.js';
export { parseConfigText } from './check-config.js';
export { sectionHashes } from './section-hashes.js';
