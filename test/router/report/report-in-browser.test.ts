/**
 * The HTML report in a real browser: headless Chromium (Debian's `chromium` package; the test is skipped when no
 * browser is installed, and never downloads one) renders the report of the demo's workload and strategies, a
 * script measures the page from the DOM's layout boxes (no element overflows its box, no text overlaps another,
 * every chart text inside its chart), and a screenshot is kept in test-output/report-in-browser/.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { DEMO_DEFAULTS, DEMO_WORKLOAD } from '../../../router/src/demo/run-demo';
import { compareStrategies } from '../../../router/src/sim/compare-strategies';
import { renderHtml } from '../../../router/src/report/render-html';
import type { BenchmarkReport } from '../../../router/src/report/report-model';
import { parseWorkloadSpec } from '../../../router/src/workload';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const OUTPUT = join(__dirname, '..', '..', '..', 'test-output', 'report-in-browser');
const run = promisify(execFile);

/** Flags for a browser that touches nothing outside its fresh profile and the local file. */
function chromiumArgs(profileDir: string): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--hide-scrollbars',
    `--user-data-dir=${profileDir}`,
  ];
}

(CHROMIUM ? describe : describe.skip)('when the report is opened in headless Chromium', () => {
  jest.setTimeout(120_000);

  // The demo's workload and strategies (plus a tuned one, for a long label), simulated once for both widths: the
  // same report format as the live demo writes, in seconds.
  let report: BenchmarkReport;
  beforeAll(() => {
    ({ report } = compareStrategies({
      workload: parseWorkloadSpec(DEMO_WORKLOAD.replace('duration=3600', 'count=300')),
      policies: [
        ...DEMO_DEFAULTS.policies,
        { name: 'sagemaker-prefix-aware', prefixLength: 2048, concurrencyThreshold: 8 },
      ],
      instances: 4,
      profile: builtinProfile('p5-llama-3.1-70b'),
      title:
        'Demo: routing strategies on a long-context workload (4 × p5-llama-3.1-70b, simulated for the browser check)',
    }));
  });

  test.each([1280, 820])(
    'GIVEN the demo report at %p px THEN no element overflows its box, no text overlaps, and a screenshot is kept',
    async (width) => {
      const page = renderHtml(report).replace(
        '</body>',
        `<script>${readFileSync(join(__dirname, 'browser', 'layout-check.js'), 'utf8')}</script></body>`,
      );
      const work = mkdtempSync(join(tmpdir(), 'report-browser-'));
      const file = join(work, 'report.html');
      writeFileSync(file, page);
      mkdirSync(OUTPUT, { recursive: true });
      try {
        const common = [
          ...chromiumArgs(join(work, 'profile')),
          `--window-size=${width},2400`,
          '--virtual-time-budget=5000',
        ];
        const { stdout } = await run(CHROMIUM!, [...common, '--dump-dom', `file://${file}`], {
          timeout: 90_000,
          maxBuffer: 64 * 1024 * 1024,
        });
        const json = /<pre id="layout-result">([^<]*)<\/pre>/.exec(stdout)?.[1];
        expect(json).toBeDefined();
        const result = JSON.parse(
          json!
            .replace(/&quot;/g, '"')
            .replace(/&amp;/g, '&')
            .replace(/&lt;/g, '<')
            .replace(/&gt;/g, '>'),
        ) as { problems: string[]; svgs: number; svgTexts: number; textLines: number; width: number };
        writeFileSync(join(OUTPUT, `layout-${width}.json`), JSON.stringify(result, null, 2));
        expect(result.width).toBe(width);
        expect(result.svgs).toBeGreaterThanOrEqual(2 + report.strategies.length);
        expect(result.svgTexts).toBeGreaterThan(50);
        expect(result.textLines).toBeGreaterThan(100);
        expect(result.problems).toEqual([]);

        await run(CHROMIUM!, [...common, `--screenshot=${join(OUTPUT, `report-${width}.png`)}`, `file://${file}`], {
          timeout: 90_000,
        });
        expect(
          readFileSync(join(OUTPUT, `report-${width}.png`))
            .subarray(1, 4)
            .toString(),
        ).toBe('PNG');
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    },
  );
});
