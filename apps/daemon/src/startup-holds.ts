import { setFlagsFromString } from 'node:v8';

const FLAG = 'semi-space-growth-factor';
/** V8's own default growth factor of the young generation. */
const V8_DEFAULT_FACTOR = 2;

/**
 * Keeps V8's young generation at its smallest while the daemon starts, and returns the function
 * that lets it grow again.
 *
 * Start-up (module loading, schema building, migrations) allocates some 45 MB of short-lived
 * objects in a burst; V8 answers a burst by growing the young generation to its 16 MB semi-space
 * maximum, and an idle process keeps those pages until the memory reducer runs many seconds
 * later: about 12 MB of an idle daemon's resident memory held for garbage it made once. The
 * growth factor is read each time V8 considers growing, so holding it at 1 during start-up and
 * restoring it once the daemon listens keeps the idle daemon small while a loaded one still
 * grows its young generation as usual. An operator who sets the flag themselves keeps theirs.
 */
export function holdYoungGenerationDuringStart(): () => void {
  const own = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => arg.includes(FLAG));
  if (own) return () => {};
  setFlagsFromString(`--${FLAG}=1`);
  return () => setFlagsFromString(`--${FLAG}=${V8_DEFAULT_FACTOR}`);
}

/** V8's compilers above its interpreter, each on by default. */
const COMPILERS = ['sparkplug', 'turbofan'];
/**
 * A V8 flag with which an operator picks the compilers themselves (`--opt` is an alias of
 * `--turbofan`; V8 reads `_` and `-` alike in flag names).
 */
const OPERATOR_COMPILER_FLAG =
  /^--(no-?)?(opt|always[-_]opt|turbofan|sparkplug|maglev|max[-_]opt|jitless)(=|$)/;

/** Whether node's command line or NODE_OPTIONS names a compiler flag. */
function operatorPicksCompilers(): boolean {
  const args = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return args.some((arg) => OPERATOR_COMPILER_FLAG.test(arg));
}

/**
 * Keeps V8 on its interpreter while the daemon starts, and returns the function that lets its
 * compilers run again.
 *
 * Start-up runs its code once (module bodies, schema building, migrations, service wiring), yet
 * parts of it are hot enough for V8 to compile them with Sparkplug and TurboFan: the compilers'
 * code pages in the node binary, their zones and the compiled code then stay resident in an idle
 * daemon that will not run that code again (8 MB of an idle daemon's RSS, measured in the
 * README). The compilers are consulted at each tiering decision, so switching them back on once
 * the daemon listens lets a loaded daemon compile its hot paths as usual. Start-up is no slower
 * for it (the compilers' background work competed with start-up for the cores). The flags are
 * switched one by one, not through `--max-opt`: lowering that one switches the compilers off by
 * implication, and raising it again does not switch them back on. An operator who picks the
 * compilers themselves keeps their choice.
 */
export function holdCompilersDuringStart(): () => void {
  if (operatorPicksCompilers()) return () => {};
  for (const compiler of COMPILERS) setFlagsFromString(`--no-${compiler}`);
  return () => {
    for (const compiler of COMPILERS) setFlagsFromString(`--${compiler}`);
  };
}
