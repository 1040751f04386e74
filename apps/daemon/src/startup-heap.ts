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
