import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A child process started by a test, with line-oriented helpers. */
export interface ChildHandle {
  process: ChildProcessByStdio<Writable, Readable, null>;
  /** Resolves with the first stdout line starting with `prefix` (also ones already seen). */
  waitForLine(prefix: string): Promise<string>;
  send(line: string): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string[];
}

const running = new Set<ChildHandle>();

/** Starts `test/fixtures/<script>`; `.ts` fixtures run through tsx. */
export function startFixture(script: string, args: string[]): ChildHandle {
  const path = join(packageDir, 'test', 'fixtures', script);
  const nodeArgs = script.endsWith('.ts') ? ['--import', 'tsx', path, ...args] : [path, ...args];
  const child = spawn(process.execPath, nodeArgs, { cwd: packageDir, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiters: Array<{ prefix: string; resolve: (line: string) => void }> = [];
  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      for (const waiter of waiters.filter((candidate) => line.startsWith(candidate.prefix))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
      newline = buffered.indexOf('\n');
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const handle: ChildHandle = {
    process: child,
    waitForLine: (prefix) => {
      const seen = lines.find((line) => line.startsWith(prefix));
      if (seen !== undefined) return Promise.resolve(seen);
      return Promise.race([
        new Promise<string>((resolve) => waiters.push({ prefix, resolve })),
        exited.then(({ code, signal }) => {
          throw new Error(
            `${script} exited (${code ?? signal}) before printing "${prefix}": ${lines.join(' | ')}`,
          );
        }),
      ]);
    },
    send: (line) => {
      child.stdin.write(`${line}\n`);
    },
    exited,
    output: () => [...lines],
  };
  running.add(handle);
  void exited.then(() => running.delete(handle));
  return handle;
}

/** Kills every fixture this module started that is still running (by its own pid). */
export async function stopFixtures(): Promise<void> {
  const left = [...running];
  for (const handle of left) handle.process.kill('SIGKILL');
  await Promise.all(left.map((handle) => handle.exited));
}
