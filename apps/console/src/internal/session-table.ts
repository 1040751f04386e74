import type { SessionRecord } from '@agentd/agent-runtime';
import { html, type TemplateResult } from 'lit';
import { formatTime } from './format.js';
import { dataTable } from './templates.js';

/** One session as `session.list` answers it. */
export type SessionListEntry = Pick<
  SessionRecord,
  'sessionKey' | 'agentId' | 'channelType' | 'kind' | 'messageCount' | 'turns' | 'createdAt' | 'updatedAt'
>;

/**
 * The sessions as a table (key, agent, kind, messages, last update); `keyCell` draws the key as
 * what opens the session on that page (a button, or a link to another page).
 */
export function sessionTable(
  label: string,
  sessions: readonly SessionListEntry[],
  keyCell: (session: SessionListEntry) => TemplateResult,
): TemplateResult {
  return dataTable(
    { label, columns: ['Session', 'Agent', 'Kind', 'Messages', 'Updated'] },
    sessions.map(
      (s) => html`<tr>
        <td>${keyCell(s)}</td>
        <td>${s.agentId}</td><td>${s.kind}</td><td>${s.messageCount}</td><td>${formatTime(s.updatedAt)}</td>
      </tr>`,
    ),
  );
}
