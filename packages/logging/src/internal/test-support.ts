import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A destination that keeps every line, parsed, for assertions. */
export interface CapturedLines {
  write(line: string): void;
  readonly raw: string[];
  readonly lines: Array<Record<string, unknown>>;
}

export function captureLines(): CapturedLines {
  const raw: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  return {
    raw,
    lines,
    write(line: string) {
      raw.push(line);
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  };
}

/** A fresh temporary directory and its removal. */
export function temporaryDirectory(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), `agentd-logging-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
