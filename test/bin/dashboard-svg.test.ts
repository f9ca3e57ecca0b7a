import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { compiledDist } from '../compiled-dist';
import { dashboardBodyOf, documentedDashboardSvg, renderDashboardSvg } from '../../bin/dashboard-svg';

const ROOT = join(__dirname, '..', '..');

describe('when the dashboard picture is drawn from a synthesized dashboard body', () => {
  // One synthesis for the file.
  const svg = documentedDashboardSvg();

  test('GIVEN the current construct WHEN drawn THEN docs/operations-dashboard.svg is exactly that picture (run npm run docs:dashboard)', () => {
    expect(readFileSync(join(ROOT, 'docs', 'operations-dashboard.svg'), 'utf8')).toBe(svg);
  });

  test('GIVEN the documented fleet WHEN drawn THEN every widget title and the threshold annotation appear', () => {
    for (const text of [
      'Requests: total and per instance',
      'Load spread: busiest ÷ mean instance (1 = even)',
      'In-flight requests per instance (max)',
      'PREFIX_AWARE concurrencyThreshold (32): spills above = 32',
      'Latency percentiles (ms)',
      'Errors (% of requests)',
      'GPU memory per instance (% per GPU)',
      'Router: decisions by reason',
      'Router: cache hit, predicted vs reported (%)',
      'vLLM prefix cache hit rate',
    ]) {
      expect(svg).toContain(text.replace(/&/g, '&amp;'));
    }
  });

  test('GIVEN a body with two widgets WHEN drawn THEN each box sits at its grid position (40 px columns, 36 px rows)', () => {
    const picture = renderDashboardSvg(
      {
        widgets: [
          {
            type: 'metric',
            x: 0,
            y: 0,
            width: 12,
            height: 6,
            properties: { title: 'A <b>', metrics: [['AWS/SageMaker', 'Invocations', { label: 'req' }]] },
          },
          { type: 'text', x: 12, y: 6, width: 12, height: 3, properties: { markdown: '**Note**\nbody' } },
        ],
      },
      'caption',
    );
    expect(picture).toContain('<rect x="2" y="2" width="476" height="212"');
    expect(picture).toContain('<rect x="482" y="218" width="476" height="104"');
    expect(picture).toContain('A &lt;b&gt;');
    expect(picture).toContain('• req');
    expect(picture).toContain('>Note<');
  });

  test('GIVEN a body joined with a region Ref WHEN parsed THEN the Ref becomes <AWS::Region>', () => {
    const body = dashboardBodyOf({
      'Fn::Join': [
        '',
        [
          '{"widgets":[{"type":"metric","x":0,"y":0,"width":6,"height":6,"properties":{"region":"',
          { Ref: 'AWS::Region' },
          '"}}]}',
        ],
      ],
    });
    expect(body.widgets[0]).toMatchObject({ properties: { region: '<AWS::Region>' } });
  });

  test('GIVEN the command with --out WHEN run THEN it writes the same picture there', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dashboard-svg-'));
    try {
      const out = join(dir, 'd.svg');
      execFileSync(
        process.execPath,
        // What `npm run docs:dashboard` runs: the compiled script (built when stale: test/compiled-dist.ts).
        [join(compiledDist(), 'bin', 'dashboard-svg.js'), '--out', out],
        { cwd: ROOT, timeout: 60_000 },
      );
      expect(readFileSync(out, 'utf8')).toBe(svg);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
