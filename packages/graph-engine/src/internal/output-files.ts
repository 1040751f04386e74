import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Per-node output files: `<runsDir>/<runId>/<nodeId>.txt`. Run and node ids are checked
 * against safe patterns before they reach here, so they are plain file names.
 */
export class OutputFiles {
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

  async remove(runId: string): Promise<void> {
    await rm(this.runDir(runId), { recursive: true, force: true });
  }
}
