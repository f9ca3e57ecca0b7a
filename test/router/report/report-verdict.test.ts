import { buildReport, type StrategyRunInput } from '../../../router/src/report/report-model';
import { renderHtml } from '../../../router/src/report/render-html';
import { renderMarkdown } from '../../../router/src/report/render-markdown';
import type { RequestRecord } from '../../../router/src/report/request-record';
import { quantileInterval, reportHeadline, throughputNoisePct } from '../../../router/src/report/report-verdict';
import { TERMINAL_COLUMNS, terminalSummary, wrap } from '../../../router/src/report/terminal-summary';
import { longContextWorkload } from '../../../router/src/workload/long-context';

const workload = longContextWorkload({ count: 4 });

/**
 * n requests sent 100 ms apart, each taking e2e 1 s; TTFT spread evenly over [ttftMs, 2·ttftMs); `output`
 * tokens each; `cached` of 100 prompt tokens.
 */
function records(prefix: string, n: number, ttftMs: number, cached: number, output = 10): RequestRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}${i}`,
    instance: i % 2 === 0 ? 'a' : 'b',
    sentAtMs: i * 100,
    ttftMs: ttftMs * (1 + i / n),
    e2eMs: 1000,
    promptTokens: 100,
    cachedPromptTokens: cached,
    outputTokens: output,
  }));
}

function report(runs: StrategyRunInput[]) {
  return buildReport({ mode: 'simulated', createdAt: '2026-01-01T00:00:00.000Z', workload, runs });
}

const run = (name: string, recs: RequestRecord[], options?: Record<string, number>): StrategyRunInput => ({
  strategy: options ? { name, options } : { name },
  instances: ['a', 'b'],
  records: recs,
});

describe('when a report decides', () => {
  test('GIVEN a strategy clearly faster with more hits and equal throughput THEN it is the best, the verdict says it pays off, and only throughput is flagged as noise', () => {
    const r = report([
      run('random', records('r', 2000, 400, 25)),
      run('least-outstanding-requests', records('l', 2000, 390, 26)),
      run('sagemaker-prefix-aware', records('s', 2000, 100, 82), { prefixLength: 2048 }),
    ]);
    const h = reportHeadline(r)!;
    expect(h.best).toBe('sagemaker-prefix-aware (prefixLength=2048)');
    expect(h.baseline).toBe('random');
    expect(h.ttftP50).toMatchObject({ text: '−75.0 %', noise: false, better: true });
    expect(h.ttftP90).toMatchObject({ noise: false, better: true });
    expect(h.hitRate).toMatchObject({ text: '+57.0 pts', noise: false, better: true });
    expect(h.throughput).toMatchObject({ text: '±0.0 %', noise: true, better: null });
    expect(h.verdict).toBe(
      'sagemaker-prefix-aware (prefixLength=2048) pays off against random: TTFT P50 −75.0 %, P90 −75.0 %, hit rate +57.0 pts, throughput ±0.0 %.',
    );
    expect(h.warnings).toEqual([
      expect.stringMatching(/^throughput ±0\.0 % is within noise \(±\d\.\d % for the completions counted\)\.$/),
    ]);
  });

  test('GIVEN cache-aware faster than sagemaker-prefix-aware THEN the headline leads with the SageMaker strategy and names cache-aware as the self-managed option', () => {
    const r = report([
      run('random', records('r', 2000, 400, 25)),
      run('sagemaker-prefix-aware', records('s', 2000, 200, 60)),
      run('cache-aware', records('c', 2000, 100, 82)),
    ]);
    const h = reportHeadline(r)!;
    expect(h.best).toBe('sagemaker-prefix-aware');
    expect(h.verdict).toMatch(/^sagemaker-prefix-aware pays off against random: TTFT P50 −50\.0 %/);
    expect(h.verdict).toMatch(
      / On a fleet the router manages itself \(the router sidecar, EC2, EKS\), cache-aware goes further: TTFT P50 −75\.0 %, P90 −75\.0 % against random\.$/,
    );
  });

  test('GIVEN only self-managed strategies against the baseline THEN the best of them leads, with no note', () => {
    const r = report([run('random', records('r', 2000, 400, 25)), run('cache-aware', records('c', 2000, 100, 82))]);
    const { verdict } = reportHeadline(r)!;
    expect(verdict).toMatch(/^cache-aware pays off against random: /);
    expect(verdict).not.toContain('On a fleet the router manages itself');
  });

  test('GIVEN differences of a fraction of a percent THEN nothing is called a gain or a loss', () => {
    const r = report([run('random', records('r', 300, 400, 25)), run('round-robin', records('o', 300, 401, 25.5, 10))]);
    const h = reportHeadline(r)!;
    expect(h.verdict).toMatch(
      /^No strategy differs from random beyond noise on this workload \(closest: round-robin, /,
    );
    expect(h.warnings).toHaveLength(4);
  });

  test('GIVEN a throughput loss beyond noise THEN a latency gain reads as a trade-off, and the HTML colours noise grey, not as a loss', () => {
    const r = report([
      run('random', records('r', 2000, 400, 25, 100)),
      run('sagemaker-prefix-aware', records('s', 2000, 100, 80, 80)),
    ]);
    expect(reportHeadline(r)!.verdict).toMatch(
      /^sagemaker-prefix-aware cuts first-token latency against random but costs throughput, a trade-off: .*throughput −20\.0 %\.$/,
    );
    const noisy = report([
      run('random', records('r', 2000, 400, 25, 100)),
      run('sagemaker-prefix-aware', records('s', 2000, 100, 80, 99)),
    ]);
    const html = renderHtml(noisy);
    expect(html).toContain('<b class="noise">−1.0 %</b>');
    expect(html).toMatch(/<td class="num noise">−1\.0 %<\/td>/);
    expect(html).not.toMatch(/<td class="num worse">−1\.0 %<\/td>/);
  });

  test('GIVEN no baseline THEN there is no headline, and the markdown has no verdict', () => {
    const r = report([run('sagemaker-prefix-aware', records('s', 10, 100, 80))]);
    expect(reportHeadline(r)).toBeNull();
    expect(renderMarkdown(r)).not.toContain('## Verdict');
  });

  test('GIVEN a report THEN the markdown opens with the verdict before any table', () => {
    const md = renderMarkdown(
      report([run('random', records('r', 500, 400, 25)), run('sagemaker-prefix-aware', records('s', 500, 100, 80))]),
    );
    expect(md.indexOf('## Verdict')).toBeGreaterThan(0);
    expect(md.indexOf('## Verdict')).toBeLessThan(md.indexOf('|'));
  });
});

describe('when estimating noise', () => {
  test('GIVEN a quantile of n evenly spread samples THEN its 95 % interval spans ±1.96·√(q(1−q)/n) in rank', () => {
    const cdf = Array.from({ length: 100 }, (_, i) => ({ value: i + 1, fraction: (i + 1) / 100 }));
    // n = 100, q = 0.5: ±0.098 → fractions 0.402 and 0.598 → values 41 and 60.
    expect(quantileInterval(cdf, 100, 0.5)).toEqual([41, 60]);
    expect(quantileInterval([], 100, 0.5)).toBeNull();
  });

  test('GIVEN completions counted THEN the throughput noise bound is 1.96·√(1/n₁+1/n₂), never under 1 %', () => {
    const r = report([run('random', records('r', 100, 400, 25)), run('x', records('x', 100, 400, 25))]);
    const [a, b] = r.strategies;
    const n = a.throughput.requestsPerSecond! * a.throughput.windowSeconds;
    expect(throughputNoisePct(a, b)).toBeCloseTo(1.96 * Math.sqrt(2 / n) * 100, 9);
    const big = report([run('random', records('r', 100_000, 400, 25)), run('x', records('x', 100_000, 400, 25))]);
    expect(throughputNoisePct(big.strategies[0], big.strategies[1])).toBe(1);
  });
});

describe('when printing to a terminal', () => {
  test('GIVEN long labels THEN every line of the summary fits 120 columns, labels are ellipsized, and the paths follow', () => {
    const long = { prefixLength: 65536, concurrencyThreshold: 1024, someOtherOptionWithALongName: 123456789 };
    const r = report([
      run('random', records('r', 50, 400, 25)),
      run('sagemaker-prefix-aware', records('s', 50, 100, 80), long),
    ]);
    const text = terminalSummary(r, ['/tmp/x/report.html', '/tmp/x/report.md']);
    const lines = text.split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(TERMINAL_COLUMNS);
    expect(lines.some((l) => l.startsWith('sagemaker-prefix-aware (prefixLength=65536') && l.includes('…'))).toBe(true);
    expect(lines.slice(-2)).toEqual(['report: /tmp/x/report.html', '        /tmp/x/report.md']);
    expect(text).not.toContain('|');
  });

  test('GIVEN text longer than the width THEN wrap breaks between words', () => {
    expect(wrap('aaa bbb ccc ddd', 7)).toEqual(['aaa bbb', 'ccc ddd']);
    expect(wrap('aaaaaaaaaa b', 4)).toEqual(['aaaaaaaaaa', 'b']);
  });
});
