import type { ApprovalResolution, PendingApproval } from '@agentd/approvals';
import { ClientError, createHttpClient, RpcCallError } from '@agentd/client';

/** Where the CLI reaches the daemon and as whom (`--url`/`AGENTD_URL`, `--token`/`AGENTD_TOKEN`). */
export interface RemoteOptions {
  url: string;
  token: string;
  /** `--reason`, for approve and deny. */
  reason?: string | undefined;
  /** Where lines go (tests capture them). @default console.log / console.error */
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/** Seconds, minutes or hours, whichever reads best. */
function age(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  return `${Math.floor(seconds / 3600)}h`;
}

/**
 * `agentd approvals` (list the pending requests), `agentd approve <id>` and `agentd deny <id>`
 * over `admin.approval.*`. Answers the exit code: 0 done, 1 failed (an RPC error or no
 * answer), 2 usage.
 */
export async function runApprovalCommand(
  command: 'approvals' | 'approve' | 'deny',
  args: readonly string[],
  options: RemoteOptions,
): Promise<number> {
  const out = options.out ?? ((line: string) => console.log(line));
  const err = options.err ?? ((line: string) => console.error(line));
  const client = createHttpClient({ url: options.url, token: options.token });
  try {
    if (command === 'approvals') {
      const { requests } = (await client.call('admin.approval.pending', {})) as {
        requests: PendingApproval[];
      };
      if (requests.length === 0) {
        out('no pending approvals');
        return 0;
      }
      for (const request of requests) {
        out(
          `${request.id}  ${request.toolName}  agent ${request.agentId}  session ${request.sessionKey}  ` +
            `waiting ${age(request.ageMs)}  args ${request.argsDigest.preview}`,
        );
      }
      return 0;
    }
    const [id] = args;
    if (!id || args.length > 1) {
      err(`usage: agentd ${command} <id> [--reason TEXT]`);
      return 2;
    }
    const approved = command === 'approve';
    const result = (await client.call('admin.approval.resolve', {
      id,
      approved,
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
    })) as ApprovalResolution;
    const because = result.reason ? ` (${result.reason})` : '';
    out(
      result.alreadyResolved
        ? `${result.id} was already ${result.status}${because}; nothing changed`
        : `${result.id} ${result.status}: ${result.toolName} in session ${result.sessionKey}${because}`,
    );
    return result.alreadyResolved && result.status !== (approved ? 'approved' : 'denied') ? 1 : 0;
  } catch (error) {
    if (error instanceof RpcCallError) {
      err(`error ${error.code}: ${error.message}`);
      return 1;
    }
    if (error instanceof ClientError) {
      err(`${error.code}: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
