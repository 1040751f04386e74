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
    import { holdYoungGenerationDuringStart } from ${JSON.stringify(join(import.meta.dirname, 'startup-heap.ts'))};
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
