import { TerminalError } from '../errors.js';

/** Named keys and the bytes a terminal sends for them (xterm's normal cursor mode). */
const NAMED_KEYS: ReadonlyMap<string, string> = new Map([
  ['Enter', '\r'],
  ['Tab', '\t'],
  ['Escape', '\x1b'],
  ['Backspace', '\x7f'],
  ['Delete', '\x1b[3~'],
  ['Up', '\x1b[A'],
  ['Down', '\x1b[B'],
  ['Right', '\x1b[C'],
  ['Left', '\x1b[D'],
  ['Home', '\x1b[H'],
  ['End', '\x1b[F'],
  ['PageUp', '\x1b[5~'],
  ['PageDown', '\x1b[6~'],
  ['Space', ' '],
  ['F1', '\x1bOP'],
  ['F2', '\x1bOQ'],
  ['F3', '\x1bOR'],
  ['F4', '\x1bOS'],
]);

/** The key names {@link keyBytes} accepts, for the tool description. */
export const KEY_NAMES = [...NAMED_KEYS.keys(), 'C-a … C-z', 'C-[', 'C-]', 'C-\\'];

/**
 * The bytes of a key: a name of {@link NAMED_KEYS} or a control chord `C-x` (`C-c` is ETX, the
 * interrupt a shell turns into SIGINT). Anything else is `INVALID_PARAMS` naming `keys`.
 */
export function keyBytes(key: string): string {
  const named = NAMED_KEYS.get(key);
  if (named !== undefined) return named;
  const chord = /^C-([a-zA-Z[\]\\])$/.exec(key);
  if (chord) return String.fromCharCode((chord[1] as string).toUpperCase().charCodeAt(0) & 0x1f);
  throw new TerminalError('INVALID_PARAMS', `keys: unknown key ${JSON.stringify(key.slice(0, 40))}`, {
    data: { field: 'keys' },
  });
}
