/**
 * Fits the prefill coefficients of the `h200-llama-3.1-8b` profile to prefill times measured on one NVIDIA
 * H200 (router/profiles/measurements/), using the uncached rows only, and holds the engine model against every
 * measured row, cached-prefix rows included (the fit never sees those: they test the claim that a cached
 * prefix costs only through attention).
 *
 *   npm run bench:h200-fit                     # prints the fit and the table
 *   npm run bench:h200-fit -- --write-docs     # also replaces the marked table in docs/emulator.md
 *
 * The fit is `base + us·new + ns·new·(cached + new/2)` with cached = 0, least squares on relative error: the
 * rows span 17 ms to 565 ms and the test bounds are relative, so every row should weigh the same. The model
 * figures come from the engine model itself (batch 1, idle engine, request overhead excluded), not from the
 * formula, so chunking and block-granular prefix hits are included.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import decodeMeasurements from '../profiles/measurements/h200-llama-3.1-8b-shape-decode-lean.json';
import prefillMeasurements from '../profiles/measurements/h200-llama-3.1-8b-shape-prefill-lean.json';
import { EngineModel, type FinishedEvent } from '../src/emulator/engine-model';
import { builtinProfile, type EngineProfile } from '../src/emulator/engine-profile';
import { StepTimeModel } from '../src/emulator/step-time';
import { fitPrefill, type PrefillFit, type PrefillRow } from '../src/emulator/prefill-fit';

export { fitPrefill, type PrefillFit, type PrefillRow };

export const H200_PROFILE_NAME = 'h200-llama-3.1-8b';

export const UNCACHED_ROWS: readonly PrefillRow[] = Object.entries(prefillMeasurements.uncached_ms)
  .map(([tokens, ms]) => ({ cachedTokens: 0, newTokens: Number(tokens), measuredMs: ms }))
  .sort((a, b) => a.newTokens - b.newTokens);

export const CACHED_ROWS: readonly PrefillRow[] = prefillMeasurements.cached.map((r) => ({
  cachedTokens: r.cached,
  newTokens: r.new,
  measuredMs: r.measured_ms,
}));

/** "7,168 cached + 1,024 new" ÷ "8,192 uncached", as measured (0.170). */
export const MEASURED_HEADLINE_RATIO: number = prefillMeasurements.ratio_7168_cached_1024_new_vs_8192_uncached;

/** The bounds: relative error allowed per row kind. */
export const BOUNDS = { uncached: 0.1, cached: 0.2, headlineRatio: 0.15 } as const;

/** The fit as a profile stores it: 3 significant digits (the measurements carry no more). */
export function roundFit(fit: PrefillFit): PrefillFit {
  const r = (v: number) => Number(v.toPrecision(3));
  return {
    baseMs: r(fit.baseMs),
    usPerScheduledToken: r(fit.usPerScheduledToken),
    attentionNsPerTokenPair: r(fit.attentionNsPerTokenPair),
  };
}

function fillerText(label: string, tokens: number): string {
  let text = '';
  for (let i = 0; text.length < tokens * 4; i++) text += `${label} ${i}. `;
  return text.slice(0, tokens * 4); // 4 characters per token
}

export interface EnginePrefill {
  /** Time to first token minus the request overhead: the engine steps that computed the prompt. */
  readonly ms: number;
  /** Prefix-cache hit the engine found (must equal the row's cached tokens). */
  readonly cachedTokens: number;
  /** Engine steps the prompt took (more than one when it exceeds maxNumBatchedTokens). */
  readonly steps: number;
}

/**
 * Drives the engine model through one measured row: on an idle engine, a request of `cachedTokens` warms the
 * prefix cache, then a request of `cachedTokens + newTokens` sharing that prefix runs alone (batch 1) and
 * produces one token. Returns its time to first token without the request overhead.
 */
export function enginePrefill(profile: EngineProfile, cachedTokens: number, newTokens: number): EnginePrefill {
  let steps = 0;
  let counting = false;
  const engine = new EngineModel(profile, { onStep: () => (counting ? steps++ : undefined) });
  const prefix = fillerText('prefix', cachedTokens);
  let submitMs = 0;
  if (cachedTokens > 0) {
    engine.submit({ id: 'warm', promptText: prefix, maxTokens: 1 }, 0);
    const warm = engine.drain().find((e): e is FinishedEvent => e.type === 'finished');
    if (warm === undefined) throw new Error('engine prefill: the warm-up request did not finish');
    submitMs = warm.timeMs + 1000;
  }
  counting = true;
  engine.submit({ id: 'row', promptText: prefix + fillerText('new', newTokens), maxTokens: 1 }, submitMs);
  const done = engine.drain().find((e): e is FinishedEvent => e.type === 'finished' && e.id === 'row');
  if (done === undefined) throw new Error('engine prefill: the measured request did not finish');
  return { ms: done.ttftMs - profile.requestOverheadMs, cachedTokens: done.cachedTokens, steps };
}

export interface RowResult extends PrefillRow {
  readonly modelMs: number;
  /**
   * Diagnostic, not used by the model: ns per attention pair this row implies once the fit's base and
   * per-token cost are taken off, (measured − base − us·new) / (new·(cached + new/2)).
   */
  readonly impliedNsPerPair: number;
  readonly error: number;
  readonly bound: number | undefined;
}

export interface DecodeRowResult {
  readonly batch: number;
  readonly context: number;
  readonly measuredMs: number;
  readonly modelMs: number;
}

export interface FitReport {
  readonly fit: PrefillFit;
  readonly rounded: PrefillFit;
  readonly profile: EngineProfile;
  readonly rows: readonly RowResult[];
  readonly modelHeadlineRatio: number;
  readonly decode: readonly DecodeRowResult[];
}

/** Which bound the issue sets for a row: uncached from 1,024 tokens ±10 %, every cached row ±20 %. */
export function boundFor(row: PrefillRow): number | undefined {
  if (row.cachedTokens > 0) return BOUNDS.cached;
  return row.newTokens >= 1024 ? BOUNDS.uncached : undefined;
}

export function runFit(profile: EngineProfile = builtinProfile(H200_PROFILE_NAME)): FitReport {
  const fit = fitPrefill(UNCACHED_ROWS);
  const rows = [...UNCACHED_ROWS, ...CACHED_ROWS].map((row) => {
    const modelMs = enginePrefill(profile, row.cachedTokens, row.newTokens).ms;
    const pairs = row.newTokens * (row.cachedTokens + row.newTokens / 2);
    const impliedNsPerPair =
      ((row.measuredMs - fit.baseMs - fit.usPerScheduledToken * 1e-3 * row.newTokens) / pairs) * 1e6;
    return { ...row, modelMs, error: modelMs / row.measuredMs - 1, bound: boundFor(row), impliedNsPerPair };
  });
  const modelHeadlineRatio = enginePrefill(profile, 7168, 1024).ms / enginePrefill(profile, 0, 8192).ms;
  // Decode, for contrast only: the step-time model's all-decode step (each sequence attends context + 1).
  const stepTime = new StepTimeModel(profile.stepTime);
  const decode = decodeMeasurements.rows.map((r) => ({
    batch: r.batch,
    context: r.context,
    measuredMs: r.step_ms,
    modelMs: stepTime.durationMs(r.batch, r.batch * (r.context + 1), r.batch * (r.context + 0.5)),
  }));
  return { fit, rounded: roundFit(fit), profile, rows, modelHeadlineRatio, decode };
}

const int = (n: number) => n.toLocaleString('en-US');
const ms1 = (n: number) => n.toFixed(1);
const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)} %`;

/** The docs table: measured vs model for every row, the headline ratio, the fit, and decode for contrast. */
export function renderMarkdown(report: FitReport): string {
  const { fit, profile } = report;
  const s = profile.stepTime;
  const lines = [
    `Prefill fit on the 7 uncached rows (least squares on relative error): base ${fit.baseMs.toFixed(3)} ms, ` +
      `${fit.usPerScheduledToken.toFixed(3)} µs per token, ${fit.attentionNsPerTokenPair.toFixed(4)} ns per attention pair; ` +
      `profile \`${profile.name}\`: ${s.baseMs} ms, ${s.usPerScheduledToken} µs, ${s.attentionNsPerTokenPair} ns. ` +
      'Model = the engine model with that profile, batch 1, idle engine, time to first token minus the request overhead. ' +
      'Last column, a diagnostic the model does not use: (measured − base − per-token cost) ÷ new·(cached + new/2).',
    '',
    '| cached tokens | new tokens | measured (ms) | model (ms) | model vs measured | bound | ns per attention pair implied by the row |',
    '| ---: | ---: | ---: | ---: | ---: | :---: | ---: |',
  ];
  for (const r of report.rows) {
    const bound = r.bound === undefined ? '—' : `±${r.bound * 100} %`;
    lines.push(
      `| ${int(r.cachedTokens)} | ${int(r.newTokens)} | ${ms1(r.measuredMs)} | ${ms1(r.modelMs)} | ${pct(r.error)} | ${bound} | ${r.impliedNsPerPair.toFixed(2)} |`,
    );
  }
  const ratioError = report.modelHeadlineRatio / MEASURED_HEADLINE_RATIO - 1;
  lines.push(
    '',
    `"7,168 cached + 1,024 new" ÷ "8,192 uncached": measured ${MEASURED_HEADLINE_RATIO.toFixed(3)}, ` +
      `model ${report.modelHeadlineRatio.toFixed(3)} (${pct(ratioError)}; bound ±${BOUNDS.headlineRatio * 100} %).`,
    '',
    "Decode, for contrast only (CUDA-graph replay of the lean forward, no scheduler or sampler; the profile's decode " +
      'coefficients are first principles, not fitted to these):',
    '',
    '| batch | context | measured step (ms) | model step (ms) | model vs measured |',
    '| ---: | ---: | ---: | ---: | ---: |',
  );
  for (const d of report.decode) {
    lines.push(
      `| ${d.batch} | ${int(d.context)} | ${d.measuredMs.toFixed(2)} | ${d.modelMs.toFixed(2)} | ${pct(d.modelMs / d.measuredMs - 1)} |`,
    );
  }
  return lines.join('\n');
}

const BEGIN = '<!-- bench:h200-fit:begin -->';
const END = '<!-- bench:h200-fit:end -->';

/** The block between the markers in a docs file, or undefined when the markers are missing. */
export function docsBlock(text: string): string | undefined {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  return start !== -1 && end > start
    ? text
        .slice(start + BEGIN.length, end)
        .replace(/^\n/, '')
        .replace(/\n$/, '')
    : undefined;
}

export function writeIntoDocs(docsPath: string, markdown: string): void {
  const current = existsSync(docsPath) ? readFileSync(docsPath, 'utf8') : '';
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  if (start === -1 || end < start) throw new Error(`${docsPath} has no ${BEGIN} … ${END} block to replace`);
  writeFileSync(docsPath, `${current.slice(0, start)}${BEGIN}\n${markdown}\n${current.slice(end)}`);
}

/** Prints the fit, whether the profile carries it, and the table; with --write-docs updates docs/emulator.md. */
export function main(
  argv: readonly string[],
  print: (line: string) => void,
  docsPath = join(process.cwd(), 'docs', 'emulator.md'),
): FitReport {
  const unknown = argv.filter((a) => a !== '--write-docs');
  if (unknown.length > 0) throw new Error(`usage: h200-prefill-fit [--write-docs]; unknown argument "${unknown[0]}"`);
  const report = runFit();
  const { fit, rounded, profile } = report;
  print(
    `prefill fit on ${UNCACHED_ROWS.length} uncached rows (router/profiles/measurements/h200-llama-3.1-8b-shape-prefill-lean.json):`,
  );
  print(`  baseMs                  ${fit.baseMs.toFixed(4)}  -> ${rounded.baseMs}`);
  print(`  usPerScheduledToken     ${fit.usPerScheduledToken.toFixed(4)}  -> ${rounded.usPerScheduledToken}`);
  print(`  attentionNsPerTokenPair ${fit.attentionNsPerTokenPair.toFixed(4)}  -> ${rounded.attentionNsPerTokenPair}`);
  const s = profile.stepTime;
  const matches =
    s.baseMs === rounded.baseMs &&
    s.usPerScheduledToken === rounded.usPerScheduledToken &&
    s.attentionNsPerTokenPair === rounded.attentionNsPerTokenPair;
  print(
    `profile ${profile.name} carries the rounded fit: ${matches ? 'yes' : 'NO — update router/profiles/h200-llama-3.1-8b.json'}`,
  );
  print('');
  print(renderMarkdown(report));
  if (argv.includes('--write-docs')) {
    writeIntoDocs(docsPath, renderMarkdown(report));
    print(`\ntable written to ${docsPath}`);
  }
  return report;
}

if (require.main === module) {
  try {
    main(process.argv.slice(2), (line) => process.stdout.write(`${line}\n`));
  } catch (err) {
    process.stderr.write(`bench:h200-fit failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
