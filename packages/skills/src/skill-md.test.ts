import { describe, expect, it } from 'vitest';
import { isSkillsError } from './errors.js';
import { parseSkillMd } from './skill-md.js';

describe('parseSkillMd', () => {
  it('reads name, description, version, the tool manifest and the body', () => {
    const skill = parseSkillMd(
      '---\nname: pdf-fill\ndescription: Fills PDF forms.\nversion: 1.2\nallowed-tools: [memory_search, graph_define]\n---\n# Steps\nDo it.\n',
    );
    expect(skill).toEqual({
      name: 'pdf-fill',
      description: 'Fills PDF forms.',
      version: '1.2',
      requiredTools: ['memory_search', 'graph_define'],
      executables: [],
      body: '# Steps\nDo it.',
    });
  });

  it.each([
    ['no front matter', '# just markdown', /no YAML front matter/],
    ['bad YAML', '---\nname: [unclosed\n---\n', /not valid YAML/],
    ['a missing description', '---\nname: x\n---\nbody', /description/],
    ['an invalid name', '---\nname: Bad Name\ndescription: d\n---\n', /name/],
    ['two tool lists', '---\nname: x\ndescription: d\ntools: [a]\nrequired-tools: [b]\n---\n', /once/],
    ['YAML aliases', '---\nname: &a x\ndescription: *a\n---\n', /not valid YAML/],
  ])('refuses %s, naming the problem', (_label, text, message) => {
    let caught: unknown;
    try {
      parseSkillMd(text);
    } catch (error) {
      caught = error;
    }
    expect(isSkillsError(caught, 'INVALID_SKILL')).toBe(true);
    expect((caught as Error).message).toMatch(message);
  });
});
