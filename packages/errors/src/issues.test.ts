import { describe, expect, it } from 'vitest';
import { firstIssueText, toFieldIssues } from './index.js';

const issues = [
  { path: ['rules', 2, 'mode'], message: 'Invalid option' },
  { path: [], message: 'Unrecognized key: "extra"' },
];

describe('firstIssueText', () => {
  it('names the first issue by its dotted path after the prefix', () => {
    expect(firstIssueText('approvals.', issues)).toBe('approvals.rules.2.mode: Invalid option');
    expect(firstIssueText('args.', [issues[1]!])).toBe('args.: Unrecognized key: "extra"');
    expect(firstIssueText('learning.', [])).toBe('learning.: invalid');
    expect(firstIssueText('createX: ', [issues[1]!], 'options')).toBe(
      'createX: options: Unrecognized key: "extra"',
    );
    expect(firstIssueText('', issues, '<root>')).toBe('rules.2.mode: Invalid option');
  });
});

describe('toFieldIssues', () => {
  it('keeps every issue with its path as text, under the given segments', () => {
    expect(toFieldIssues(issues)).toEqual([
      { path: ['rules', '2', 'mode'], message: 'Invalid option' },
      { path: [], message: 'Unrecognized key: "extra"' },
    ]);
    expect(toFieldIssues(issues, ['orchestrate'])[0]).toEqual({
      path: ['orchestrate', 'rules', '2', 'mode'],
      message: 'Invalid option',
    });
  });
});
