/** `2026-11-25 16:05:09` in the viewer's time zone, or `—` for no time. */
export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A JSON-RPC or other error as one readable line. */
export function errorText(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error) {
    const code = 'code' in error ? ` (${String((error as { code: unknown }).code)})` : '';
    return `${String((error as { message: unknown }).message)}${code}`;
  }
  return String(error);
}

/** Pretty JSON for a `<pre>`. */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}
