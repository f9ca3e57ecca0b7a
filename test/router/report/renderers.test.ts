import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildReport,
  cdfChart,
  formatDeltaPct,
  formatMs,
  linearTicks,
  logTicks,
  parseReportJson,
  renderHtml,
  renderJson,
  renderMarkdown,
  ReportSchemaError,
  SUMMARY_COLUMNS,
  writeReport,
} from '../../../router/src/report';
import { fabricatedReportInput } from './fabricated-run';

const report = buildReport(fabricatedReportInput());

describe('when rendering the report as markdown', () => {
  const markdown = renderMarkdown(report);

  test('GIVEN three strategies THEN the results table has every column and one row per strategy', () => {
    expect(markdown).toContain(`| ${SUMMARY_COLUMNS.join(' | ')} |`);
    for (const s of report.strategies) expect(markdown).toContain(`| ${s.label} | 1,800 |`);
  });

  test('GIVEN a random baseline THEN a comparison table lists the others with signed deltas', () => {
    expect(markdown).toContain('## Against random');
    const row = markdown
      .split('\n')
      .find((l) => l.startsWith('| sagemaker-prefix-aware (prefixLength=1024, concurrencyThreshold=64) | −'));
    expect(row).toMatch(/\| [−+]\d+\.\d % \| .* pts \|/);
  });

  test('GIVEN ceilings THEN they appear with the fleet capacity', () => {
    expect(markdown).toContain('| fleet (one LRU of 588,000 blocks = 9,408,000 tokens) | 84.7 % |');
  });
});

describe('when rendering the report as JSON', () => {
  test('GIVEN a report THEN its JSON reads back equal, with schema id and version', () => {
    const json = renderJson(report);
    expect(json.startsWith('{\n  "schema": "cdk-prefix-aware-llm/benchmark-report",\n  "schemaVersion": 1,')).toBe(
      true,
    );
    expect(parseReportJson(json)).toEqual(JSON.parse(json));
    expect(json).not.toMatch(/NaN|Infinity/);
  });

  test.each([
    ['not json', /not valid JSON/],
    ['[]', /schema must be 'cdk-prefix-aware-llm\/benchmark-report'/],
    ['{"schema":"cdk-prefix-aware-llm/benchmark-report","schemaVersion":2}', /schemaVersion must be 1 \(got 2\)/],
    [
      '{"schema":"cdk-prefix-aware-llm/benchmark-report","schemaVersion":1,"strategies":{}}',
      /'strategies' must be an array/,
    ],
  ])('GIVEN %s THEN it is refused', (text, message) => {
    expect(() => parseReportJson(text)).toThrow(ReportSchemaError);
    expect(() => parseReportJson(text)).toThrow(message);
  });
});

describe('when rendering the report as HTML', () => {
  const html = renderHtml(report);

  test('GIVEN a report THEN the page is self-contained: no script, no external resource', () => {
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(/i);
    expect(html).not.toMatch(/(src|href)=/i);
    // The only URLs are the SVG namespace and instance ids shown as text.
    for (const url of html.match(/https?:\/\/[^\s"<]+/g) ?? [])
      expect(url).toMatch(/^(http:\/\/www\.w3\.org\/2000\/svg|http:\/\/127\.0\.0\.1:\d+:?)$/);
  });

  test('GIVEN three strategies THEN there are two CDF charts with one line each and a load chart per strategy', () => {
    expect(html.match(/<svg /g)).toHaveLength(2 + 3);
    expect(html.match(/<path d="M/g)).toHaveLength(2 * 3);
    expect(html).toContain('TTFT CDF (log x)');
    expect(renderHtml(report, { ttftScale: 'log' }).match(/<svg /g)).toHaveLength(1 + 3);
  });

  test('GIVEN labels with markup THEN they are escaped', () => {
    const input = fabricatedReportInput();
    const evil = buildReport({
      ...input,
      title: '<b>x</b> & "y"',
      runs: [{ ...input.runs[0], label: '<script>alert(1)</script>' }],
    });
    const page = renderHtml(evil);
    expect(page).not.toContain('<script>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('<title>&lt;b&gt;x&lt;/b&gt; &amp; &quot;y&quot;</title>');
  });

  test('GIVEN the workload and ceilings THEN both are on the page', () => {
    expect(html).toContain('Workload parameters');
    expect(html).toContain('<dt>groups</dt><dd>550</dd>');
    expect(html).toContain('Cache-hit ceilings');
  });
});

describe('when writing report files', () => {
  test('GIVEN a directory THEN report.json, report.md and report.html are written and their paths returned', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'report-test-')), 'nested');
    const files = await writeReport(report, dir, { baseName: 'long-context' });
    expect(files).toEqual({
      json: join(dir, 'long-context.json'),
      markdown: join(dir, 'long-context.md'),
      html: join(dir, 'long-context.html'),
    });
    expect(parseReportJson(readFileSync(files.json, 'utf8')).strategies).toHaveLength(3);
    expect(readFileSync(files.markdown, 'utf8')).toBe(renderMarkdown(report));
    expect(readFileSync(files.html, 'utf8')).toBe(renderHtml(report));
    await expect(writeReport(report, dir, { baseName: '../x' })).rejects.toThrow(/baseName must be/);
  });
});

describe('when drawing axes', () => {
  test('GIVEN a linear range THEN ticks are 1, 2 or 5 × 10^k apart', () => {
    expect(linearTicks(0, 3700)).toEqual([0, 1000, 2000, 3000]);
    expect(linearTicks(0, 2400)).toEqual([0, 500, 1000, 1500, 2000]);
    expect(linearTicks(0, 0.148, 4)).toEqual([0, 0.05, 0.1]);
  });

  test('GIVEN a log range THEN ticks are 1-2-5 per decade, or decades only when the range is wide', () => {
    expect(logTicks(10, 1000)).toEqual([10, 20, 50, 100, 200, 500, 1000]);
    expect(logTicks(1, 1e6)).toEqual([1, 10, 100, 1000, 10000, 100000, 1000000]);
  });

  test('GIVEN an empty series THEN the chart still renders axes', () => {
    expect(
      cdfChart([{ label: 'none', color: '#000', points: [] }], { scale: 'log', title: 't', xLabel: 'x' }),
    ).toContain('</svg>');
  });

  test('GIVEN values THEN times and deltas read naturally', () => {
    expect([formatMs(0.42), formatMs(87.4), formatMs(1240), formatMs(12345), formatMs(null)]).toEqual([
      '0.4 ms',
      '87 ms',
      '1.24 s',
      '12.3 s',
      '—',
    ]);
    expect([formatDeltaPct(-71.24), formatDeltaPct(15), formatDeltaPct(0.01)]).toEqual([
      '−71.2 %',
      '+15.0 %',
      '±0.0 %',
    ]);
  });
});
