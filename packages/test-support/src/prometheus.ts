/**
 * The value of one series in a Prometheus text exposition, by its name and labels exactly as
 * rendered (`agentd_x_total{method="a",code="0"}`); `undefined` when there is no such line.
 */
export function seriesValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
