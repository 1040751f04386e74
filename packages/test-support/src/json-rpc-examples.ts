/** One request of the JSON-RPC 2.0 specification's section 7 examples and the answer it must get. */
export interface JsonRpcExample {
  /** What the example shows, for the test's name. */
  case: string;
  /** The request text, as the specification writes it. */
  text: string;
  /** The response the server must send. */
  answer: unknown;
}

/**
 * Section 7's calls of `subtract` with positional and with named parameters. A server under
 * test registers `subtract` taking `[minuend, subtrahend]` or `{ minuend, subtrahend }`.
 */
export const jsonRpcSubtractExamples: readonly JsonRpcExample[] = [
  {
    case: 'positional parameters',
    text: '{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}',
    answer: { jsonrpc: '2.0', result: 19, id: 1 },
  },
  {
    case: 'positional parameters, reversed',
    text: '{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}',
    answer: { jsonrpc: '2.0', result: -19, id: 2 },
  },
  {
    case: 'named parameters',
    text: '{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}',
    answer: { jsonrpc: '2.0', result: 19, id: 3 },
  },
  {
    case: 'named parameters in the other order',
    text: '{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}',
    answer: { jsonrpc: '2.0', result: 19, id: 4 },
  },
];

/** Section 7's notifications, of a method that exists (`update`) and of one that does not: no answer. */
export const jsonRpcNotificationExamples: readonly string[] = [
  '{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}',
  '{"jsonrpc": "2.0", "method": "foobar"}',
];

/** Section 7's requests that must be answered with one error object (never an array). */
export const jsonRpcErrorExamples: readonly JsonRpcExample[] = [
  {
    case: 'a call of a non-existent method with -32601',
    text: '{"jsonrpc": "2.0", "method": "foobar", "id": "1"}',
    answer: { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found: foobar' }, id: '1' },
  },
  {
    case: 'invalid JSON with -32700 and a null id',
    text: '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]',
    answer: { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null },
  },
  {
    case: 'an invalid request object with -32600 and a null id',
    text: '{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
    answer: {
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: method must be a string' },
      id: null,
    },
  },
  {
    case: 'a batch of invalid JSON with a single -32700',
    text: `[
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
]`,
    answer: { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null },
  },
  {
    case: 'an empty array with a single -32600 and a null id',
    text: '[]',
    answer: { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: empty batch' }, id: null },
  },
];
