export { BODY_LIMIT, type BoundedBody, collectBoundedBody, readBoundedBody } from './body.js';
export { type InspectOptions, inspectValue, pathText, type ValuePath, type ValueProblem } from './inspect.js';
export { hasMethods, isUnsafeKey, ownEntry, UNSAFE_KEYS } from './keys.js';
export { type BoundedBytes, readBoundedStream } from './stream.js';
export { ownPath, valueText } from './values.js';
export {
  type AddressPolicyOptions,
  bareHost,
  createAddressPolicy,
  type HostDecision,
  isLocalUrl,
  nonPublicRange,
  type ResolveHost,
} from './address.js';
export {
  isToolPattern,
  matchesAnyToolPattern,
  matchesToolPattern,
  TOOL_NAME,
  TOOL_PATTERN,
  TOOL_PATTERN_RULE,
} from './tool-patterns.js';
