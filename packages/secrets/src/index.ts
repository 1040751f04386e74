export { ENV_FILE, type EnvFile, openEnvFile } from './env-file.js';
export { isSecretsError, SecretsError, type SecretsErrorCode, type SecretsErrorOptions } from './errors.js';
export {
  loadMasterKey,
  MASTER_KEY_ENV,
  MASTER_KEY_MIN_BYTES,
  type MasterKey,
  type MasterKeySource,
  parseMasterKey,
  readMasterKeyFile,
} from './master-key.js';
export {
  matchesFilter,
  REDACTED_VALUE,
  SECRET_LIST_DEFAULT,
  SECRET_LIST_MAX,
  SECRET_NAME_MAX_LENGTH,
  SECRET_VALUE_MAX_LENGTH,
  secretFilterSchema,
  secretNameSchema,
  secretValueSchema,
} from './names.js';
export { type SecretsSection, secretsSectionSchema } from './section.js';
export {
  type ListedSecret,
  type OpenSecretsOptions,
  openSecrets,
  type SecretStorage,
  type Secrets,
} from './secrets.js';
export {
  openSecretsStore,
  SECRETS_DB_FILE,
  type SecretInfo,
  type SecretsStore,
  type SecretsStoreOptions,
} from './secrets-store.js';
