/**
 * A function that replaces every configured secret found in `text` with `[REDACTED]`.
 * Client libraries may quote a request URL (Telegram's carries the bot token) in their
 * errors; everything an adapter reports passes through this first.
 */
export function secretScrubber(secrets: ReadonlyArray<string | undefined>): (text: string) => string {
  const present = secrets.filter(
    (secret): secret is string => typeof secret === 'string' && secret.length >= 4,
  );
  return (text) => present.reduce((out, secret) => out.split(secret).join('[REDACTED]'), text);
}

/** The message of an unknown throw, scrubbed. */
export function scrubbedMessage(error: unknown, scrub: (text: string) => string): string {
  return scrub(error instanceof Error ? error.message : String(error));
}
