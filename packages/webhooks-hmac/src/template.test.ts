import { describe, expect, it } from 'vitest';
import { renderTemplate, resolveTemplateExpression } from './template.js';

const context = {
  payload: {
    a: { b: 'deep' },
    items: [{ name: 'first' }, { name: 'second' }],
    count: 3,
    ok: false,
    nothing: null,
    nested: { list: [1, 2] },
    source: 'ci',
  },
  headers: { 'x-event': 'push', 'content-type': 'application/json' },
  query: { ref: 'main' },
  path: 'ci/builds',
  now: '2025-01-02T03:04:05.000Z',
};

describe('renderTemplate', () => {
  // Each row renders one template against `context` and expects exactly the given text.
  it.each([
    {
      name: 'resolves dot paths, array indexes, headers, query, path and now',
      template:
        '{{payload.a.b}}|{{payload.items[1].name}}|{{headers.x-event}}|{{query.ref}}|{{path}}|{{now}}',
      expected: 'deep|second|push|main|ci/builds|2025-01-02T03:04:05.000Z',
    },
    {
      name: 'resolves an expression without prefix against the payload',
      template: '{{source}} {{items[0].name}} {{a.b}}',
      expected: 'ci first deep',
    },
    {
      name: 'tolerates spaces inside the braces and mixed-case header names',
      template: '{{ payload.a.b }} {{headers.X-Event}}',
      expected: 'deep push',
    },
    {
      name: 'renders numbers and booleans as text and objects as JSON',
      template: '{{count}} {{ok}} {{nested}}',
      expected: '3 false {"list":[1,2]}',
    },
    {
      name: 'renders unresolved and null expressions as empty strings',
      template:
        '[{{missing}}][{{payload.a.b.c.d}}][{{items[9].name}}][{{nothing}}][{{headers.none}}][{{query.x}}][{{}}][{{a..b}}]',
      expected: '[][][][][][][][]',
    },
    {
      name: 'never reads the prototype chain',
      template:
        '[{{__proto__}}][{{constructor}}][{{payload.constructor.name}}][{{a.__proto__}}][{{a.b.length}}][{{toString}}][{{headers.constructor}}][{{query.__proto__}}]',
      expected: '[][][][][][][][]',
    },
    {
      name: 'reads own properties only, so an array length resolves and a string length does not',
      template: '{{items.length}}|{{a.b.length}}',
      expected: '2|',
    },
  ])('$name', ({ template, expected }) => {
    expect(renderTemplate(template, context)).toBe(expected);
  });

  it('never evaluates code', () => {
    const before = (globalThis as Record<string, unknown>).pwned;
    expect(
      renderTemplate("{{globalThis.pwned = 1}}{{process.exit(1)}}{{require('fs')}}{{1+1}}", context),
    ).toBe('');
    expect((globalThis as Record<string, unknown>).pwned).toBe(before);
  });

  it('does not throw for payloads that are not objects', () => {
    expect(renderTemplate('{{a}}|{{payload}}|{{[0]}}', { payload: ['x'] })).toBe('|["x"]|x');
    expect(renderTemplate('{{a}}', { payload: 'text' })).toBe('');
    expect(renderTemplate('{{a}}', {})).toBe('');
  });

  it('computes now once per render when given a clock function', () => {
    let calls = 0;
    const text = renderTemplate('{{now}} {{now}}', {
      now: () => {
        calls++;
        return `t${calls}`;
      },
    });
    expect(text).toBe('t1 t1');
  });

  it('leaves text without expressions unchanged', () => {
    expect(renderTemplate('plain {text} and } {', context)).toBe('plain {text} and } {');
  });
});

describe('resolveTemplateExpression', () => {
  it('returns the raw value', () => {
    expect(resolveTemplateExpression('payload.nested.list', context)).toEqual([1, 2]);
    expect(resolveTemplateExpression('nested.list[1]', context)).toBe(2);
    expect(resolveTemplateExpression('nested.list.0', context)).toBe(1);
  });
});
