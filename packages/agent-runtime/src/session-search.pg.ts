import { keyPrefixMatch } from './sql-fragments.js';

/**
 * Session search on PostgreSQL: the generated `content_tsv` column (GIN) in place of FTS5.
 * `plainto_tsquery` requires every word, as the FTS5 query does; `ts_rank_cd` (higher is
 * better) stands in for bm25, so the order of near ties may differ from libsql's. The snippet
 * is `ts_headline` over the message with the hits in brackets, up to 16 words. Binds the words
 * (space-separated), the key prefix three times, and the row limit: the libsql statement's order.
 */
export const PG_SESSION_SEARCH = `SELECT s.session_key, s.agent_id, s.channel_type, m.created_at,
    ts_headline('simple', m.content, q.query,
      'StartSel=[, StopSel=], MaxWords=16, MinWords=8, ShortWord=0, MaxFragments=1, FragmentDelimiter=…')
      AS snippet,
    ts_rank_cd(m.content_tsv, q.query) AS rank
  FROM plainto_tsquery('simple', ?) AS q (query)
  JOIN agent_messages m ON m.content_tsv @@ q.query
  JOIN agent_sessions s ON s.id = m.session_id
  WHERE ${keyPrefixMatch('s.session_key')}
  ORDER BY rank DESC, m.id DESC LIMIT ?`;
