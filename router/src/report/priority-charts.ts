import type { PriorityClassSummary } from './priority-classes';
import { cdfChart } from './svg-charts';

/**
 * The HTML report's charts for priority classes: one TTFT CDF per class, each strategy a series in its color
 * (empty when no strategy has classes).
 */
export function priorityCdfSection(
  strategies: readonly {
    readonly label: string;
    readonly byPriority?: Readonly<Record<string, PriorityClassSummary>>;
  }[],
  colors: readonly string[],
): string[] {
  const classes = [...new Set(strategies.flatMap((s) => Object.keys(s.byPriority ?? {})))].sort(
    (a, b) => Number(a) - Number(b),
  );
  if (classes.length === 0) return [];
  const cards = classes.map((priority) => {
    const series = strategies.flatMap((s, i) => {
      const summary = s.byPriority?.[priority];
      return summary === undefined ? [] : [{ label: s.label, color: colors[i], points: summary.ttftCdf }];
    });
    const title = `TTFT CDF, priority ${priority}`;
    return `<div class="card">${cdfChart(series, { scale: 'linear', title, xLabel: 'time to first token', width: 540, height: 360 })}</div>`;
  });
  return ['<h2>Time to first token by priority class</h2>', '<div class="charts">', ...cards, '</div>'];
}
