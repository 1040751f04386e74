import {
  type ChannelsDatabase,
  type ChannelsSqlResult,
  type ChannelsSqlValue,
  type ChannelsStatement,
  type DeliveryEntry,
  insertEntries,
  lockChats,
  markSent,
  ROWS_PER_STATEMENT,
  sentRecords,
} from './queue-store.js';

/** One change waiting for the next commit; `done` hears whether it wrote a row. */
type Change =
  | { kind: 'insert'; entry: DeliveryEntry; done: Outcome }
  | { kind: 'sent'; deliveryId: string; messageId: string; at: number; done: Outcome }
  | { kind: 'statement'; statement: ChannelsStatement; done: Outcome };

interface Outcome {
  resolve(wrote: boolean): void;
  reject(error: unknown): void;
}

/**
 * The queue's writes, committed together: every change made while a commit runs joins the
 * next one, so under load one transaction carries many entries and idle there is no wait.
 * Each promise settles once its change is durable (or refused), never before.
 */
export interface GroupCommit {
  /** Writes a new entry; `false` when its idempotency key was already stored. */
  insert(entry: DeliveryEntry): Promise<boolean>;
  /**
   * Records an attempt of a `sending` entry acknowledged at `at`; `false` when the row was not
   * `sending` and does not hold that record.
   */
  sent(deliveryId: string, messageId: string, at: number): Promise<boolean>;
  /** Runs one statement ending in `RETURNING`; `true` when it returned a row. */
  run(sql: string, args: ChannelsSqlValue[]): Promise<boolean>;
  /** Resolves when everything handed over so far is committed or refused. */
  idle(): Promise<void>;
}

/**
 * Creates the committer. A commit that fails as a whole is split: each change is committed on
 * its own, so one bad row refuses only its own caller and the others are written. With
 * `chatOrdered` (PostgreSQL, several instances writing one queue) new entries are written in
 * the order they came under their chats' commit locks, so each chat's stored order is the
 * order its rows became visible in.
 */
export function createGroupCommit(
  db: ChannelsDatabase,
  options: { chatOrdered?: boolean } = {},
): GroupCommit {
  const chatOrdered = options.chatOrdered === true;
  let waiting: Change[] = [];
  let running: Promise<void> | undefined;

  const push = (make: (done: Outcome) => Change): Promise<boolean> =>
    new Promise<boolean>((resolve, reject) => {
      waiting.push(make({ resolve, reject }));
      // setImmediate, not a microtask: the changes of every I/O callback of this loop turn join in.
      running ??= new Promise<void>((begin) => setImmediate(begin)).then(drain);
    });

  const drain = async (): Promise<void> => {
    while (waiting.length > 0) {
      const changes = waiting;
      waiting = [];
      await commit(changes);
    }
    running = undefined;
  };

  const commit = async (changes: Change[]): Promise<void> => {
    const { statements, settle } = plan(changes, chatOrdered);
    let results: ChannelsSqlResult[];
    try {
      results = await db.batch(statements);
    } catch (error) {
      if (changes.length === 1) changes[0]?.done.reject(error);
      else for (const change of changes) await commit([change]);
      return;
    }
    settle(results, db);
  };

  return {
    insert: (entry) => push((done) => ({ kind: 'insert', entry, done })),
    sent: (deliveryId, messageId, at) => push((done) => ({ kind: 'sent', deliveryId, messageId, at, done })),
    run: (sql, args) => push((done) => ({ kind: 'statement', statement: { sql, args }, done })),
    async idle() {
      while (running) await running;
    },
  };
}

/**
 * The statements of one commit: new entries in multi-row INSERTs, acknowledgements in
 * multi-row UPDATEs, the rest one by one in the order they came. Nothing in one commit depends
 * on another change of the same commit (an entry is claimed or recorded only after its own
 * write has committed), so grouping by kind keeps the meaning.
 */
function plan(
  changes: Change[],
  chatOrdered: boolean,
): {
  statements: ChannelsStatement[];
  settle(results: ChannelsSqlResult[], db: ChannelsDatabase): void;
} {
  const fresh: Array<Extract<Change, { kind: 'insert' }>> = [];
  const keyed: Array<Extract<Change, { kind: 'insert' }>> = [];
  const acks: Array<Extract<Change, { kind: 'sent' }>> = [];
  const singles: Array<Extract<Change, { kind: 'statement' }>> = [];
  for (const change of changes) {
    // An entry without a caller's key carries its own new delivery id as its key.
    // Chat-ordered, every new entry goes in one sequence of statements in the order it came.
    if (change.kind === 'insert')
      (change.entry.idempotencyKey === change.entry.deliveryId && !chatOrdered ? fresh : keyed).push(change);
    else if (change.kind === 'sent') acks.push(change);
    else singles.push(change);
  }
  const statements: ChannelsStatement[] = [];
  // How each statement's result says which of its changes wrote a row.
  const groups: Group[] = [];
  if (chatOrdered && keyed.length > 0) {
    statements.push(
      lockChats(
        keyed.map(({ entry }) => ({ channelType: entry.channelType, channelId: entry.operation.channelId })),
      ),
    );
    groups.push({ by: 'all', changes: [] });
  }
  for (let start = 0; start < fresh.length; start += ROWS_PER_STATEMENT) {
    const group = fresh.slice(start, start + ROWS_PER_STATEMENT);
    statements.push(
      insertEntries(
        group.map((change) => change.entry),
        true,
      ),
    );
    groups.push({ by: 'all', changes: group });
  }
  for (let start = 0; start < keyed.length; start += ROWS_PER_STATEMENT) {
    const group = keyed.slice(start, start + ROWS_PER_STATEMENT);
    statements.push(
      insertEntries(
        group.map((change) => change.entry),
        false,
        chatOrdered,
      ),
    );
    groups.push({ by: 'returned', changes: group, ids: group.map((change) => change.entry.deliveryId) });
  }
  for (let start = 0; start < acks.length; start += ROWS_PER_STATEMENT) {
    const group = acks.slice(start, start + ROWS_PER_STATEMENT);
    statements.push(markSent(group));
    groups.push({ by: 'count', changes: group });
  }
  for (const single of singles) {
    statements.push(single.statement);
    groups.push({ by: 'row', changes: [single] });
  }
  return {
    statements,
    settle(results, db) {
      groups.forEach((group, index) => {
        settleGroup(group, results[index], db);
      });
    },
  };
}

/** The changes of one statement, and how its result says which of them wrote a row. */
type Group =
  /** The statement wrote every row of the group (or failed as a whole). */
  | { by: 'all'; changes: Array<{ done: Outcome }> }
  /** RETURNING named the rows written, in `ids`, one per change. */
  | { by: 'returned'; changes: Array<{ done: Outcome }>; ids: string[] }
  /** One statement of one change, ending in RETURNING: a row returned says it wrote. */
  | { by: 'row'; changes: Array<{ done: Outcome }> }
  /** Acknowledgements: every row was written when the statement changed as many as it named. */
  | { by: 'count'; changes: Array<Extract<Change, { kind: 'sent' }>> };

function settleGroup(group: Group, result: ChannelsSqlResult | undefined, db: ChannelsDatabase): void {
  const rows = result?.rows ?? [];
  switch (group.by) {
    case 'all':
      for (const change of group.changes) change.done.resolve(true);
      return;
    case 'row':
      group.changes[0]?.done.resolve(rows.length > 0);
      return;
    case 'returned': {
      const written = new Set(rows.map((row) => String(row.delivery_id)));
      group.changes.forEach((change, position) => {
        change.done.resolve(written.has(group.ids[position] ?? ''));
      });
      return;
    }
    case 'count': {
      const { changes } = group;
      if ((result?.rowsAffected ?? 0) >= changes.length) {
        for (const change of changes) change.done.resolve(true);
        return;
      }
      // Some row was not `sending` any more: the stored rows say which records hold.
      sentRecords(db, changes).then(
        (held) => {
          changes.forEach((change, position) => {
            change.done.resolve(held[position] === true);
          });
        },
        (error: unknown) => {
          for (const change of changes) change.done.reject(error);
        },
      );
    }
  }
}
