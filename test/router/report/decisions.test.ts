import { buildReport, renderMarkdown } from '../../../router/src/report';
import { parseWorkloadSpec } from '../../../router/src/workload';

describe('when records carry decision reasons and predictions', () => {
  const rec = (id: string, reason: string, predicted: number | undefined, cached: number, error?: string) => ({
    id,
    instance: 'a',
    sentAtMs: 0,
    ttftMs: error ? null : 100,
    e2eMs: 200,
    ...(error ? { error } : { promptTokens: 1000, cachedPromptTokens: cached, outputTokens: 10 }),
    reason,
    ...(predicted !== undefined ? { predictedCachedTokens: predicted } : {}),
  });
  const report = buildReport({
    mode: 'simulated',
    workload: parseWorkloadSpec('long-context?count=4'),
    runs: [
      {
        strategy: { name: 'cache-aware' },
        instances: ['a'],
        records: [
          rec('1', 'cache-match', 800, 700),
          rec('2', 'cache-match', 600, 600),
          rec('3', 'cold-rendezvous', 0, 0),
          rec('4', 'balanced', 0, 0, 'http_400:BadRequestError'),
        ],
      },
      { strategy: { name: 'random' }, instances: ['a'], records: [rec('1', 'random', undefined, 0)] },
    ],
  });

  test('GIVEN reasons THEN the report gives each reason its share of the requests, errors included', () => {
    expect(report.strategies[0].decisionReasons).toEqual({
      balanced: 0.25,
      'cache-match': 0.5,
      'cold-rendezvous': 0.25,
    });
    expect(report.strategies[1].decisionReasons).toEqual({ random: 1 });
  });

  test('GIVEN predictions THEN predicted and delivered hits are over the same successful requests; none without predictions', () => {
    expect(report.strategies[0].predictedHit).toEqual({ predicted: 1400 / 3000, delivered: 1300 / 3000 });
    expect(report.strategies[1].predictedHit).toBeNull();
  });

  test('GIVEN the markdown THEN a Decisions section lists them', () => {
    const md = renderMarkdown(report);
    expect(md).toContain('## Decisions');
    expect(md).toContain(
      '| cache-aware | balanced 25.0 %, cache-match 50.0 %, cold-rendezvous 25.0 % | 46.7 % | 43.3 % |',
    );
  });
});
