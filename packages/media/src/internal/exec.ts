import { spawn } from 'node:child_process';
import { MediaError } from '../errors.js';

/** The Debian package that ships each program, named in "not installed" errors. */
const PACKAGE_OF: Record<string, string> = {
  ffmpeg: 'ffmpeg',
  ffprobe: 'ffmpeg',
  'espeak-ng': 'espeak-ng',
  pocketsphinx_continuous: 'pocketsphinx pocketsphinx-en-us',
  tesseract: 'tesseract-ocr tesseract-ocr-eng',
};

/** How one program run is bounded. */
export interface RunOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Bytes written to the program's stdin, then closed. */
  input?: Buffer | undefined;
  /** Largest stdout kept; more fails the run. @default 64 MiB */
  maxStdoutBytes?: number | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/** What a successful run printed. */
export interface RunResult {
  stdout: Buffer;
  stderr: string;
}

const STDERR_TAIL = 4000;

/** The Debian package of a program (own keys only: a command named `__proto__` has none). */
function packageOf(command: string): string | undefined {
  const base = command.split('/').pop() ?? command;
  return Object.hasOwn(PACKAGE_OF, base) ? PACKAGE_OF[base] : undefined;
}

function packageHint(command: string): string {
  const pkg = packageOf(command);
  return pkg
    ? `install it with: apt-get install -y ${pkg}`
    : 'install it or set its path in the media config';
}

/**
 * Runs `command` without a shell (arguments are never interpreted), killing it at the deadline
 * or on abort. A missing program is `ENGINE_MISSING` naming the Debian package to install, a
 * non-zero exit `ENGINE_FAILED` with the tail of its stderr (engine diagnostics, never input).
 */
export function runProgram(
  command: string,
  args: readonly string[],
  options: RunOptions,
): Promise<RunResult> {
  const maxStdout = options.maxStdoutBytes ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new MediaError('TIMEOUT', `${command} was not started: the call was cancelled`));
      return;
    }
    const child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: options.env ?? process.env,
    });
    const chunks: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let failure: MediaError | undefined;
    const stop = (error: MediaError) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () =>
        stop(
          new MediaError('TIMEOUT', `${command} did not finish within ${options.timeoutMs} ms`, {
            data: { command, timeoutMs: options.timeoutMs },
          }),
        ),
      options.timeoutMs,
    );
    const onAbort = () => stop(new MediaError('TIMEOUT', `${command} was cancelled`, { data: { command } }));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdout) {
        stop(
          new MediaError('ENGINE_FAILED', `${command} produced more than ${maxStdout} bytes`, {
            data: { command },
          }),
        );
        return;
      }
      chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        failure ??= new MediaError('ENGINE_MISSING', `${command} is not installed; ${packageHint(command)}`, {
          data: { command, package: packageOf(command) },
          cause: error,
        });
      } else {
        failure ??= new MediaError('ENGINE_FAILED', `${command} could not be started: ${error.message}`, {
          data: { command },
          cause: error,
        });
      }
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (failure) reject(failure);
      else if (exitCode !== 0)
        reject(
          new MediaError('ENGINE_FAILED', `${command} exited with ${exitCode}: ${lastLine(stderr)}`, {
            data: { command, exitCode, stderr: stderr.slice(-800) },
          }),
        );
      else resolve({ stdout: Buffer.concat(chunks), stderr });
    });
    // A program that exits before reading its stdin makes the write fail with EPIPE: the exit
    // status already says what went wrong.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);
  });
}

function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return (lines.at(-1) ?? 'no diagnostics').slice(0, 300);
}
