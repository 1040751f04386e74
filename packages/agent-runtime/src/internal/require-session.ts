import { AgentRuntimeError } from '../errors.js';
import type { RuntimeContext } from '../runtime-context.js';
import type { SessionRecord } from '../session-store.js';

/** The session of a key; throws `SESSION_NOT_FOUND`. */
export async function requireSession(ctx: RuntimeContext, sessionKey: string): Promise<SessionRecord> {
  const session = await ctx.store.get(sessionKey);
  if (!session) {
    throw new AgentRuntimeError('SESSION_NOT_FOUND', `Session not found: ${sessionKey}`, {
      data: { sessionKey },
    });
  }
  return session;
}
