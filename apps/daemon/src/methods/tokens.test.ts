import { createTokenStore } from '@agentd/auth-scopes';
import type { MethodContext } from '@agentd/rpc-core';
import { describe, expect, it } from 'vitest';
import { tokenMethods } from './tokens.js';

const context = {
  identity: { tokenId: 'admin', clientId: 'admin', scopes: ['*'] },
} as unknown as MethodContext;

function createMethod() {
  const method = tokenMethods({ tokens: createTokenStore() }).find((each) => each.name === 'tokens.create');
  if (!method) throw new Error('tokens.create is missing');
  return method;
}

describe('tokenMethods', () => {
  it('refuses in its params an id or clientId the token store refuses (fuzz: {"scopes":["rpc"],"id":"."} was -32603)', () => {
    const method = createMethod();
    for (const id of ['.', '..', '-', '-x', '_a', '.hidden']) {
      expect(method.params.safeParse({ scopes: ['rpc'], id }).success, `id ${id}`).toBe(false);
      expect(method.params.safeParse({ scopes: ['rpc'], clientId: id }).success, `clientId ${id}`).toBe(
        false,
      );
    }
  });

  it('creates a token for every id its params accept', async () => {
    const method = createMethod();
    for (const id of ['a', 'a.b', 'A1_b-2', '0', 'x.']) {
      const params = method.params.parse({ scopes: ['rpc'], id });
      // The list holds three methods' types; this one is tokens.create.
      const create = method.handler as (input: typeof params, context: MethodContext) => Promise<unknown>;
      await expect(create(params, context), id).resolves.toMatchObject({ id, clientId: id });
    }
  });
});
