import { describe, expect, it } from 'vitest';
import { jsonRpcErrorExamples, jsonRpcSubtractExamples } from './json-rpc-examples.js';

describe('JSON-RPC examples', () => {
  it('pair every request with a JSON-RPC 2.0 answer carrying the request id', () => {
    for (const { text, answer } of [...jsonRpcSubtractExamples, ...jsonRpcErrorExamples]) {
      expect(answer).toMatchObject({ jsonrpc: '2.0' });
      const id = (answer as { id: unknown }).id;
      if (id !== null) expect(JSON.parse(text)).toMatchObject({ id });
    }
  });
});
