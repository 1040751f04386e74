/**
 * The first-start notice: the generated admin token in a block a person cannot miss between
 * the JSON log lines, with the commands to run next. `lines` are what the bootstrap printed
 * (a heading, the secret, a usage hint); the block is written to stdout only, never the log.
 */
export function firstStartBlock(lines: readonly string[], url: string): string {
  const token = lines.find((line) => /^agd_\S+$/.test(line));
  const rule = '='.repeat(72);
  const body = [
    rule,
    'agentd: first start. An admin token (scope *) was created; it is shown only now',
    '(only its hash is stored). Keep it somewhere safe.',
    '',
    `    ${token ?? lines.join(' ')}`,
    '',
    'Next, in another terminal:',
    '',
    `    export AGENTD_TOKEN=${token ?? '<the token above>'}`,
    ...(url === 'http://127.0.0.1:7420' ? [] : [`    export AGENTD_URL=${url}`]),
    '    ./agentd call system.ping',
    rule,
  ];
  return `\n${body.join('\n')}\n`;
}
