import { describe, expect, it } from 'vitest';
import { renderTemplate } from './template.js';

describe('renderTemplate', () => {
  it('fills inputs, nested inputs and node outputs', () => {
    const text = renderTemplate('Hi {{inputs.name}} ({{ inputs.user.age }}): {{nodes.a.output}}', {
      inputs: { name: 'Ada', user: { age: 36 } },
      outputs: { a: 'done' },
    });
    expect(text).toBe('Hi Ada (36): done');
  });

  it('renders objects as JSON and unresolved references as nothing', () => {
    const text = renderTemplate(
      '[{{inputs.list}}][{{inputs.missing}}][{{nodes.x.output}}][{{other}}][{{inputs.n}}]',
      {
        inputs: { list: [1, 'a'], n: null },
      },
    );
    expect(text).toBe('[[1,"a"]][][][][]');
  });

  it('never reaches prototypes', () => {
    const text = renderTemplate(
      '{{inputs.__proto__}}|{{inputs.constructor.name}}|{{inputs.toString}}|{{inputs.a.length}}|{{nodes.toString.output}}|{{nodes.__proto__.output}}',
      { inputs: { a: 'abc' }, outputs: {} },
    );
    expect(text).toBe('|||||');
  });

  it('reads only the output field of a node', () => {
    expect(renderTemplate('{{nodes.a.status}}{{nodes.a.output.length}}', { outputs: { a: 'x' } })).toBe('');
  });

  it('leaves text with single braces alone', () => {
    expect(renderTemplate('{a} {{ }} {{inputs.a}', { inputs: { a: 1 } })).toBe('{a}  {{inputs.a}');
  });
});
