/**
 * The derived profiles' checks (router/src/emulator/derived-profile.ts): the efficiency factors fitted on the H200
 * measurements, and the derived profiles held against those measurements and against the shipped p5 and p4d
 * Llama 3.1 70B profiles, as a table; with --write-docs it replaces the marked table in docs/emulator.md.
 *
 *   npm run bench:derived-profiles
 *   npm run bench:derived-profiles -- --write-docs
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { derivedProfileChecks, fitEfficiency, renderDerivedChecks } from '../src/emulator/derived-profile';
import { withMarkedSection } from './marked-section';

export const DERIVED_MARKERS = {
  begin: '<!-- bench:derived-profiles:begin -->',
  end: '<!-- bench:derived-profiles:end -->',
} as const;

/** The fitted factors and the check table, as docs/emulator.md shows them. */
export function derivedProfilesMarkdown(): string {
  const eff = fitEfficiency();
  const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
  return [
    `Fitted on the H200 rows: dense layers at ${pct(eff.dense)} and attention at ${pct(eff.attention)} of the datasheet BF16 peak, ` +
      `${pct(eff.bandwidth)} of memory bandwidth, ${eff.stepOverheadMs.toFixed(2)} ms per step beyond memory traffic.`,
    '',
    renderDerivedChecks(derivedProfileChecks()),
  ].join('\n');
}

export function main(argv: readonly string[], print: (line: string) => void = console.log): void {
  const unknown = argv.filter((a) => a !== '--write-docs');
  if (unknown.length > 0) throw new Error(`usage: derived-profiles [--write-docs]; unknown argument "${unknown[0]}"`);
  const markdown = derivedProfilesMarkdown();
  print(markdown);
  if (argv.includes('--write-docs')) {
    const docs = join(process.cwd(), 'docs', 'emulator.md');
    writeFileSync(docs, withMarkedSection(readFileSync(docs, 'utf8'), DERIVED_MARKERS, markdown, 'append'));
    print(`\ntable written to ${docs}`);
  }
}

if (require.main === module) main(process.argv.slice(2));
