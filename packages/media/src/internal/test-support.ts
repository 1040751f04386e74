import { execFileSync } from 'node:child_process';

/**
 * Test inputs made by the real ffmpeg: renders the lavfi `source` (a test pattern, a tone, a
 * coloured frame with drawn text) through `options` (codec, pixel format, frame count) into
 * `output`, quietly and overwriting. For tests only: this package's and the daemon's.
 */
export function renderLavfi(source: string, options: string[], output: string): void {
  execFileSync('ffmpeg', [
    '-nostdin',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    source,
    ...options,
    output,
  ]);
}
