/** A builtin's refusal or failure: a plain message for the script (never a stack or a secret). */
export class BuiltinRefusal extends Error {}
