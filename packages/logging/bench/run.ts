/**
 * Redaction cost on log lines: pino with no redaction (baseline), pino's own
 * `redact` with generated wildcard paths for the contract fields at depth 1..5
 * (exact-case, and with the case variants a path list needs to approach
 * case-insensitive matching), and this package's formatter walk as createLogger
 * ships it. All write to a sink that drops the bytes, so only formatting is measured.
 */
import { pino } from 'pino';
import { interleave, printComparison } from '../../../tooling/bench/harness.js';
import { createLogger, REDACTED_FIELDS } from '../src/index.js';

const sink = { write: (_line: string) => undefined };

function wildcardPaths(names: readonly string[]): string[] {
  const paths: string[] = [];
  for (let depth = 1; depth <= 5; depth++) {
    for (const name of names) paths.push([...Array(depth - 1).fill('*'), name].join('.'));
  }
  return paths;
}

const exactNames = [...REDACTED_FIELDS];
const caseNames = [
  ...new Set(
    REDACTED_FIELDS.flatMap((name) => [
      name,
      name.toLowerCase(),
      name.toUpperCase(),
      name[0]!.toUpperCase() + name.slice(1),
    ]),
  ),
];

const plain = () => ({ agentId: 'agent-1', durationMs: 12, toolName: 'search', success: true });
const nested = () => ({
  agentId: 'agent-1',
  request: {
    headers: { authorization: 'Bearer abc', accept: 'json' },
    body: { user: { name: 'n', token: 't' } },
  },
});

function subject(
  name: string,
  log: (line: Record<string, unknown>) => void,
  makeLine: () => Record<string, unknown>,
) {
  return {
    name,
    runFor: async (ms: number) => {
      const until = performance.now() + ms;
      let ops = 0;
      while (performance.now() < until) {
        for (let index = 0; index < 1000; index++) log(makeLine());
        ops += 1000;
      }
      return ops;
    },
  };
}

const baseline = pino({ customLevels: { audit: 35 } }, sink);
const pathsExact = pino({ redact: { paths: wildcardPaths(exactNames), censor: '[REDACTED]' } }, sink);
const pathsCase = pino({ redact: { paths: wildcardPaths(caseNames), censor: '[REDACTED]' } }, sink);
const agentd = createLogger({ destination: sink }).module('bench');

for (const [title, makeLine] of [
  ['plain line (4 scalar fields)', plain],
  ['nested line (secrets at depth 3 and 4)', nested],
] as const) {
  const rows = await interleave(
    [
      subject('pino, no redaction (baseline)', (line) => baseline.info(line, 'tool done'), makeLine),
      subject(
        `pino redact, ${wildcardPaths(exactNames).length} exact-case paths`,
        (line) => pathsExact.info(line, 'tool done'),
        makeLine,
      ),
      subject(
        `pino redact, ${wildcardPaths(caseNames).length} case-variant paths`,
        (line) => pathsCase.info(line, 'tool done'),
        makeLine,
      ),
      subject('@agentd/logging formatter walk', (line) => agentd.info(line, 'tool done'), makeLine),
    ],
    { warmupMs: 500, durationMs: 1000, rounds: 3 },
  );
  printComparison(title, rows);
}
