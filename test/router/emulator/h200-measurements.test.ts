import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  BOUNDS,
  CACHED_ROWS,
  docsBlock,
  enginePrefill,
  fitPrefill,
  main,
  MEASURED_HEADLINE_RATIO,
  renderMarkdown,
  roundFit,
  runFit,
  UNCACHED_ROWS,
  type FitReport,
} from '../../../router/bench/h200-prefill-fit';
import prefillMeasurements from '../../../router/profiles/measurements/h200-llama-3.1-8b-shape-prefill-lean.json';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';

const h200 = builtinProfile('h200-llama-3.1-8b');

/** Relative error of model against measured. */
const rel = (model: number, measured: number) => model / measured - 1;

describe('h200-llama-3.1-8b against prefill times measured on one H200', () => {
  describe('when fitting the prefill coefficients', () => {
    test('GIVEN the uncached rows only THEN the profile carries the fit rounded to 3 significant digits', () => {
      const fit = fitPrefill(UNCACHED_ROWS);
      expect(UNCACHED_ROWS.every((r) => r.cachedTokens === 0)).toBe(true);
      expect(roundFit(fit)).toEqual({
        baseMs: h200.stepTime.baseMs,
        usPerScheduledToken: h200.stepTime.usPerScheduledToken,
        attentionNsPerTokenPair: h200.stepTime.attentionNsPerTokenPair,
      });
    });

    test('GIVEN the same rows THEN the fit agrees with the one the measuring session recorded beside the data', () => {
      const fit = fitPrefill(UNCACHED_ROWS);
      const recorded = prefillMeasurements.fit_uncached_only;
      expect(fit.baseMs).toBeCloseTo(recorded.base_ms, 6);
      expect(fit.usPerScheduledToken).toBeCloseTo(recorded.us_per_token, 6);
      expect(fit.attentionNsPerTokenPair).toBeCloseTo(recorded.ns_per_pair, 6);
    });

    test('GIVEN exact times from any positive coefficients THEN the fit recovers them', () => {
      fc.assert(
        fc.property(
          fc.double({ min: 0.1, max: 20, noNaN: true }),
          fc.double({ min: 1, max: 100, noNaN: true }),
          fc.double({ min: 0.1, max: 5, noNaN: true }),
          // Lengths spanning at least 2× (a measuring sweep does: 1k to 16k tokens). Three close lengths far from 0
          // (61, 63, 64 × 256) leave the intercept ill-conditioned in any solver: the times' last bit moves it by
          // more than 5e-6 of a 0.1 ms base.
          fc
            .uniqueArray(fc.integer({ min: 1, max: 64 }), { minLength: 3, maxLength: 8 })
            .filter((lengths) => Math.max(...lengths) >= 2 * Math.min(...lengths)),
          (baseMs, us, ns, lengths) => {
            const rows = lengths.map((k) => {
              const n = k * 256;
              return { cachedTokens: 0, newTokens: n, measuredMs: baseMs + us * 1e-3 * n + (ns * 1e-6 * (n * n)) / 2 };
            });
            const fit = fitPrefill(rows);
            expect(rel(fit.baseMs, baseMs)).toBeCloseTo(0, 5);
            expect(rel(fit.usPerScheduledToken, us)).toBeCloseTo(0, 6);
            expect(rel(fit.attentionNsPerTokenPair, ns)).toBeCloseTo(0, 6);
          },
        ),
        { numRuns: 100 },
      );
    });

    test('GIVEN fewer than 3 rows THEN the fit refuses', () => {
      expect(() => fitPrefill(UNCACHED_ROWS.slice(0, 2))).toThrow(/need at least 3 rows, got 2/);
    });
  });

  describe('when the engine model (batch 1, idle, request overhead excluded) runs every measured row', () => {
    let report: FitReport;
    beforeAll(() => {
      report = runFit(h200);
    });

    test('GIVEN the measurements THEN every row is driven: 7 uncached and 7 over a cached prefix', () => {
      expect(report.rows).toHaveLength(UNCACHED_ROWS.length + CACHED_ROWS.length);
      expect(UNCACHED_ROWS.map((r) => r.newTokens)).toEqual([512, 1024, 2048, 4096, 8192, 12288, 16384]);
      expect(CACHED_ROWS).toHaveLength(7);
    });

    test.each(UNCACHED_ROWS.filter((r) => r.newTokens >= 1024).map((r) => [r.newTokens, r.measuredMs]))(
      'GIVEN %i uncached tokens THEN the model is within ±10 %% of the measured %f ms',
      (tokens, measuredMs) => {
        const engine = enginePrefill(h200, 0, tokens);
        expect(engine.cachedTokens).toBe(0);
        // One step per maxNumBatchedTokens (8,192) chunk, as vLLM chunks it; the measurement is one forward.
        expect(engine.steps).toBe(Math.ceil(tokens / h200.maxNumBatchedTokens));
        expect(Math.abs(rel(engine.ms, measuredMs))).toBeLessThanOrEqual(BOUNDS.uncached);
      },
    );

    test.each(CACHED_ROWS.map((r) => [r.cachedTokens, r.newTokens, r.measuredMs]))(
      'GIVEN %i cached + %i new tokens (rows the fit never saw) THEN the model is within ±20 %% of the measured %f ms',
      (cached, fresh, measuredMs) => {
        const engine = enginePrefill(h200, cached, fresh);
        expect(engine.cachedTokens).toBe(cached); // the engine hits exactly the measured prefix
        expect(engine.steps).toBe(1);
        expect(Math.abs(rel(engine.ms, measuredMs))).toBeLessThanOrEqual(BOUNDS.cached);
      },
    );

    test('GIVEN 7,168 cached + 1,024 new against 8,192 uncached THEN the ratio is within ±15 % of the measured 0.170', () => {
      expect(MEASURED_HEADLINE_RATIO).toBeCloseTo(0.17, 3);
      const ratio = enginePrefill(h200, 7168, 1024).ms / enginePrefill(h200, 0, 8192).ms;
      expect(ratio).toBe(report.modelHeadlineRatio);
      expect(Math.abs(rel(ratio, MEASURED_HEADLINE_RATIO))).toBeLessThanOrEqual(BOUNDS.headlineRatio);
    });

    test('GIVEN the report THEN docs/emulator.md shows exactly this table (regenerate: npm run bench:h200-fit -- --write-docs)', () => {
      const docs = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'emulator.md'), 'utf8');
      expect(docsBlock(docs)).toBe(renderMarkdown(report));
    });
  });

  describe('when the script runs', () => {
    test('GIVEN no arguments THEN it prints the fit, says the profile carries it, and prints the table', () => {
      const lines: string[] = [];
      main([], (l) => lines.push(l), '/nonexistent/emulator.md');
      const out = lines.join('\n');
      expect(out).toContain('attentionNsPerTokenPair 1.1316  -> 1.13');
      expect(out).toContain('profile h200-llama-3.1-8b carries the rounded fit: yes');
      expect(out).toContain('| 7,168 | 1,024 | 42.0 |');
    });

    test('GIVEN --write-docs THEN only the marked block of the docs file is replaced', () => {
      const path = join(mkdtempSync(join(tmpdir(), 'h200-fit-')), 'emulator.md');
      writeFileSync(path, 'before\n<!-- bench:h200-fit:begin -->\nold\n<!-- bench:h200-fit:end -->\nafter\n');
      const report = main(['--write-docs'], () => undefined, path);
      expect(readFileSync(path, 'utf8')).toBe(
        `before\n<!-- bench:h200-fit:begin -->\n${renderMarkdown(report)}\n<!-- bench:h200-fit:end -->\nafter\n`,
      );
    });

    test('GIVEN an unknown argument or a docs file without markers THEN it fails saying so', () => {
      expect(() => main(['--fast'], () => undefined)).toThrow(/unknown argument "--fast"/);
      const path = join(mkdtempSync(join(tmpdir(), 'h200-fit-')), 'emulator.md');
      writeFileSync(path, 'no markers\n');
      expect(() => main(['--write-docs'], () => undefined, path)).toThrow(/has no <!-- bench:h200-fit:begin -->/);
    });
  });
});
