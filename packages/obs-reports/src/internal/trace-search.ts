import { ownEntry } from '@agentd/input-guards';
import { readSessionIndex, type SessionIndexRecord } from '@agentd/evidence';
import type { TraceSearchParams } from '../obs-service.js';
import { invalidParams, type ObsServiceContext } from './service-context.js';

const DAY_MS = 86_400_000;

const WHERE_FIELDS: Record<string, (record: SessionIndexRecord) => string> = {
  agentId: (record) => record.agentId,
  channelType: (record) => record.channelType,
  origin: (record) => record.origin,
  kind: (record) => record.kind,
  provider: (record) => record.provider,
  model: (record) => record.model,
  endReason: (record) => record.outcome.endReason,
};

/** The `where` terms of `obs.trace.search`, each a field reader and the value it must equal. */
function whereTerms(where: string | undefined) {
  return (where ?? '')
    .split(',')
    .map((term) => term.trim())
    .filter((term) => term.length > 0)
    .map((term) => {
      const at = term.indexOf('=');
      const field = term.slice(0, at).trim();
      const get = ownEntry(WHERE_FIELDS, field);
      if (at <= 0 || get === undefined) {
        throw invalidParams(
          'where',
          `terms are field=value with field one of ${Object.keys(WHERE_FIELDS).join(', ')}`,
        );
      }
      return {
        get,
        value: term.slice(at + 1).trim(),
      };
    });
}

/** `obs.trace.search` (rule 1) over yesterday's and today's session-index days. */
export async function searchTraces(
  context: ObsServiceContext,
  params: TraceSearchParams,
): Promise<{ rows: SessionIndexRecord[] }> {
  const limit = Math.min(params.limit ?? 200, 1000);
  let traceId = params.traceId;
  const today = Math.floor(context.now() / DAY_MS) * DAY_MS;
  const read = await readSessionIndex(
    context.dataDir,
    { sinceMs: today - DAY_MS, untilMs: today + DAY_MS },
    { rolls: context.rolls },
  );
  if (params.messageId) {
    const hit = read.records.find((record) => record.messageId === params.messageId);
    if (!hit) return { rows: [] };
    if (traceId && traceId !== hit.traceId) return { rows: [] };
    traceId = hit.traceId;
  }
  const terms = whereTerms(params.where);
  const sinceMs = params.since ? Date.parse(params.since) : 0;
  const matches = (record: SessionIndexRecord) =>
    (params.includeSynthetic || !record.synthetic) &&
    (!traceId || record.traceId === traceId) &&
    (!params.chatId || record.chatId === params.chatId) &&
    record.ts >= sinceMs &&
    terms.every((term) => term.get(record) === term.value);
  // Newest day first, newest first within a day.
  const byDay = new Map<number, SessionIndexRecord[]>();
  for (const record of read.records) {
    const day = Math.floor(record.ts / DAY_MS);
    byDay.set(day, [...(byDay.get(day) ?? []), record]);
  }
  const rows: SessionIndexRecord[] = [];
  for (const day of [...byDay.keys()].sort((a, b) => b - a)) {
    for (const record of (byDay.get(day) ?? []).reverse()) {
      if (rows.length >= limit) break;
      if (matches(record)) rows.push(record);
    }
  }
  return { rows };
}
