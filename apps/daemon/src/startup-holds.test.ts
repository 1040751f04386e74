import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Runs a fresh node (vitest's own heap has long grown) that bursts some 60 MB of short-lived
 * objects with the young generation held, then again after release, and prints the young
 * generation's committed size after each burst.
 */
function youngGenerationAfterBursts(extraArgs: string[] = []): {
  before: number;
  held: number;
  released: number;
} {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { holdYoungGenerationDuringStart } from ${JSON.stringify(join(import.meta.dirname, 'startup-holds.ts'))};
    const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
    const burst = () => { let keep = []; for (let i = 0; i < 600_000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 5000) keep = []; } };
    const before = young();
    const release = holdYoungGenerationDuringStart();
    burst();
    const held = young();
    release();
    burst(); burst();
    console.log(JSON.stringify({ before, held, released: young() }));
  `;
  const out = execFileSync(
    process.execPath,
    [...extraArgs, '--import', 'tsx', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  return JSON.parse(out) as { before: number; held: number; released: number };
}

describe('holdYoungGenerationDuringStart', () => {
  it('keeps the young generation at its smallest through a start-up burst and lets it grow once released', () => {
    const { before, held, released } = youngGenerationAfterBursts();
    expect(held).toBe(before);
    expect(released).toBeGreaterThan(held);
  });

  it('leaves an operator-set growth factor alone', () => {
    const { before, held } = youngGenerationAfterBursts(['--semi-space-growth-factor=4']);
    expect(held).toBeGreaterThan(before);
  });
});

/**
 * Runs a fresh node that runs a hot loop while the compilers are held, then after release until
 * V8 has compiled it (bounded), and prints V8's status bits for the loop's function at each point.
 */
function tiersAfterHotLoops(extraArgs: string[] = [], until = COMPILED): { held: number; released: number } {
  const script = `
    import { holdCompilersDuringStart } from ${JSON.stringify(join(import.meta.dirname, 'startup-holds.ts'))};
    const hot = (i) => (i * 7) % 13;
    const spin = () => { let s = 0; for (let i = 0; i < 200_000; i++) s += hot(i); return s; };
    const release = holdCompilersDuringStart();
    for (let round = 0; round < 20; round++) spin();
    const held = %GetOptimizationStatus(spin);
    release();
    let released = held;
    for (let round = 0; round < 500 && (released & UNTIL) === 0; round++) {
      spin();
      await new Promise((resolve) => setImmediate(resolve));
      released = %GetOptimizationStatus(spin);
    }
    console.log(JSON.stringify({ held, released }));
  `;
  const out = execFileSync(
    process.execPath,
    [
      ...extraArgs,
      '--allow-natives-syntax',
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script.replace(/UNTIL/g, String(until)),
    ],
    { encoding: 'utf8' },
  );
  return JSON.parse(out) as { held: number; released: number };
}

/** V8's `%GetOptimizationStatus` bits for code made by Sparkplug (baseline) or TurboFan. */
const BASELINE = 1 << 15;
const TURBOFAN = 1 << 4;
const COMPILED = BASELINE | TURBOFAN;

describe('holdCompilersDuringStart', () => {
  it('keeps a hot function interpreted while held and lets V8 compile it once released', () => {
    const { held, released } = tiersAfterHotLoops();
    expect(held & COMPILED).toBe(0);
    expect(released & COMPILED).not.toBe(0);
  });

  it('leaves an operator-set tier ceiling alone', () => {
    const { held } = tiersAfterHotLoops(['--max-opt=3']);
    expect(held & COMPILED).not.toBe(0);
  });

  it('leaves TurboFan off when the operator switched it off with --no-opt', () => {
    const { released } = tiersAfterHotLoops(['--no-opt'], TURBOFAN);
    expect(released & TURBOFAN).toBe(0);
  });
});
