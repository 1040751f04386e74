import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/** Where a running daemon says which address it listens on (0600, removed at stop). */
export const ADDRESS_FILE = 'agentd.address.json';

const addressSchema = z
  .object({
    host: z.string().min(1).max(255),
    port: z.number().int().min(1).max(65535),
    pid: z.number().int(),
  })
  .strict();

/** A daemon's listening address, as it records it in its data dir. */
export type DaemonAddress = z.infer<typeof addressSchema>;

/** Records the address the daemon of `dataDir` listens on (written aside, then renamed). */
export function writeDaemonAddress(dataDir: string, address: Omit<DaemonAddress, 'pid'>): void {
  const file = join(dataDir, ADDRESS_FILE);
  writeFileSync(`${file}.tmp`, JSON.stringify({ ...address, pid: process.pid }), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/** Removes the record at stop. */
export function removeDaemonAddress(dataDir: string): void {
  rmSync(join(dataDir, ADDRESS_FILE), { force: true });
}

/**
 * The address the daemon running on `dataDir` listens on, or `undefined` when no daemon
 * recorded one or the process that did is gone (a crash leaves a stale file behind).
 */
export function readDaemonAddress(dataDir: string): DaemonAddress | undefined {
  let address: DaemonAddress;
  try {
    address = addressSchema.parse(JSON.parse(readFileSync(join(dataDir, ADDRESS_FILE), 'utf8')));
  } catch {
    return undefined;
  }
  try {
    process.kill(address.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user; ESRCH: it is gone.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return address;
}
