/**
 * Delay before reconnect attempt number `attempt` (1-based).
 *
 * The ceiling doubles per attempt up to `maxDelayMs`; half of it is fixed and
 * half random ("equal jitter"), so many clients dropped by one daemon restart
 * spread their reconnects out without any of them retrying in a tight loop.
 */
export function backoffDelay(
  attempt: number,
  initialDelayMs: number,
  maxDelayMs: number,
  random: () => number,
): number {
  const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
