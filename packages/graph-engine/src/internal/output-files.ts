import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GraphQueryable } from '../database.js';

/** Where completed nodes' outputs are kept: files on one instance, a table in a cluster. */
export interface OutputStore {
  /** Readies the run's storage before its first node completes. */
  prepare(runId: string): Promise<void>;
  /** The output, or undefined when none is kept. */
  read(runId: string, nodeId: string): Promise<string | undefined>;
  /** Every output kept for the run. */
  readAll(runId: string, nodeIds: readonly string[]): Promise<Map<string, string>>;
  remove(runId: string): Promise<void>;
}

/**
 * Per-node output files: `<runsDir>/<runId>/<nodeId>.txt`. Run and node ids are checked
 * against safe patterns before they reach here, so they are plain file names.
 */
export class OutputFiles implements OutputStore {
  constructor(private readonly runsDir: string) {}

  runDir(runId: string): string {
    return join(this.runsDir, runId);
  }

  async prepare(runId: string): Promise<void> {
    await mkdir(this.runDir(runId), { recursive: true });
  }

  /** Written to a temporary name and renamed, so a reader never sees half an output. */
  async write(runId: string, nodeId: string, output: string): Promise<void> {
    const dir = this.runDir(runId);
    const target = join(dir, `${nodeId}.txt`);
    const temporary = join(dir, `.${nodeId}.${process.pid}.tmp`);
    // The run folder exists: `prepare` made it when the run started or resumed.
    await writeFile(temporary, output, 'utf8');
    await rename(temporary, target);
  }

  /** The output, or undefined when the file is missing. */
  async read(runId: string, nodeId: string): Promise<string | undefined> {
    try {
      return await readFile(join(this.runDir(runId), `${nodeId}.txt`), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async readAll(runId: string, nodeIds: readonly string[]): Promise<Map<string, string>> {
    const outputs = new Map<string, string>();
    for (const nodeId of nodeIds) {
      const output = await this.read(runId, nodeId);
      if (output !== undefined) outputs.set(nodeId, output);
    }
    return outputs;
  }

  async remove(runId: string): Promise<void> {
    await rm(this.runDir(runId), { recursive: true, force: true });
  }
}

/**
 * Per-node outputs in `graph_node_outputs` (cluster mode), so whichever instance resumes or
 * reads a run finds them. Written by the owner in the node's fenced completion transaction.
 */
export class OutputTable implements OutputStore {
  constructor(private readonly db: GraphQueryable) {}

  async prepare(): Promise<void> {
    // Nothing to make: rows are written as nodes complete.
  }

  /** Records `output` in `tx` (the caller's fenced transaction). */
  static async write(tx: GraphQueryable, runId: string, nodeId: string, output: string): Promise<void> {
    await tx.execute(
      `INSERT INTO graph_node_outputs (run_id, node_id, output) VALUES (?, ?, ?)
       ON CONFLICT (run_id, node_id) DO UPDATE SET output = excluded.output`,
      [runId, nodeId, output],
    );
  }

  async read(runId: string, nodeId: string): Promise<string | undefined> {
    const row = await this.db.get<{ output: string }>(
      'SELECT output FROM graph_node_outputs WHERE run_id = ? AND node_id = ?',
      [runId, nodeId],
    );
    return row?.output;
  }

  async readAll(runId: string): Promise<Map<string, string>> {
    const rows = await this.db.query<{ node_id: string; output: string }>(
      'SELECT node_id, output FROM graph_node_outputs WHERE run_id = ?',
      [runId],
    );
    return new Map(rows.map((row) => [row.node_id, row.output]));
  }

  async remove(runId: string): Promise<void> {
    await this.db.execute('DELETE FROM graph_node_outputs WHERE run_id = ?', [runId]);
  }
}
