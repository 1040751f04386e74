import type { IPty, IPtyForkOptions } from 'node-pty';
import type { Terminal } from '@xterm/headless';

/** What a drive needs from node-pty and @xterm/headless. */
export interface TerminalLibraries {
  spawn(file: string, args: string[], options: IPtyForkOptions): IPty;
  Terminal: typeof Terminal;
}

let loading: Promise<TerminalLibraries> | undefined;

/**
 * Imports node-pty (a native module) and the headless emulator at the first drive, so a
 * daemon whose agents never open one never loads them.
 */
export function loadLibraries(): Promise<TerminalLibraries> {
  loading ??= Promise.all([import('node-pty'), import('@xterm/headless')]).then(([pty, xterm]) => {
    // Both are CommonJS: their exports arrive on `default` under ESM.
    const ptyModule = (pty as unknown as { default?: typeof pty }).default ?? pty;
    const xtermModule = (xterm as unknown as { default?: typeof xterm }).default ?? xterm;
    return { spawn: ptyModule.spawn, Terminal: xtermModule.Terminal };
  });
  return loading;
}
