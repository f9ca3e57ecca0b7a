/**
 * `npm run docs:policies`: rewrites the generated policy tables of docs/router.md from the policy registry. They
 * sit between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` markers; a test fails when they differ.
 * It runs from the sources (ts-node), so the docs can be regenerated without building the project.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { policyOptionSpecs } from '../src/config/config-sources';
import { optionRange, type PolicyDefinition } from '../src/policy/policy-definition';
import { DEFAULT_POLICY_NAME, POLICY_DEFINITIONS, POLICY_NAMES } from '../src/policy/policy-registry';
import { withMarkedSection } from './marked-section';

const definitions = POLICY_DEFINITIONS as readonly PolicyDefinition[];

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

/** A policy's stages in run order: `serves-model → healthy → fewest-in-flight (scorer ×1) → max-score`. */
function stagesCell(d: PolicyDefinition): string {
  return d.stages
    .map(
      (s) =>
        `\`${s.name}\`${s.kind === 'scorer' ? ` (scorer ×${s.weight})` : s.kind === 'picker' ? '' : ` (${s.kind})`}`,
    )
    .join(' → ');
}

export function policyTable(): string {
  const rows = definitions.map(
    (d) =>
      `| \`${d.name}\`${d.name === DEFAULT_POLICY_NAME ? ' (default)' : ''} | ${cell(d.description)} | ${stagesCell(d)} | ${d.reasons.map((r) => `\`${r}\``).join(', ')} |`,
  );
  return ['| `--policy` | behaviour | stages, in order | reasons |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

export function policyOptionsTable(): string {
  const rows = definitions.flatMap((d) =>
    d.options.map(
      (o) => `| \`${d.name}\` | \`${o.name}\` | ${o.type} | ${optionRange(o)} | ${o.default} | ${cell(o.doc)} |`,
    ),
  );
  return [
    '| policy | option | type | allowed | default | what it does |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** Rows of the configuration table for --policy and every policy option flag. */
export function policyConfigRows(): string {
  const rows = [
    `| \`--policy <spec>\` | \`PREFIX_ROUTER_POLICY\` | \`policy.name\` (or \`"policy": "name?opt=value"\`) | \`${DEFAULT_POLICY_NAME}\` | ${POLICY_NAMES.map((n) => `\`${n}\``).join(', ')}, each optionally \`?option=value&…\` |`,
    ...policyOptionSpecs().map((o) => {
      const [policies] = o.description.split(':', 1);
      const option = definitions.flatMap((d) => d.options).find((x) => `policy.${x.name}` === o.path)!;
      return `| \`${cell(`${o.flag} <${o.valueName}>`)}\` | \`${o.env}\` | \`${o.path}\` | ${option.default} | ${optionRange(option)} (${policies}) |`;
    }),
  ];
  return [
    '| flag | environment variable | file key | default | allowed |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

export const GENERATED_SECTIONS: Readonly<Record<string, () => string>> = {
  policies: policyTable,
  'policy-options': policyOptionsTable,
  'policy-config': policyConfigRows,
};

/** `text` with every generated section it holds replaced by its current content (sections it lacks stay absent). */
export function withGeneratedSections(text: string): string {
  let out = text;
  for (const [name, render] of Object.entries(GENERATED_SECTIONS)) {
    const markers = { begin: `<!-- generated:${name} -->`, end: `<!-- /generated:${name} -->` };
    if (out.includes(markers.begin)) out = withMarkedSection(out, markers, render(), 'append');
  }
  return out;
}

/** The repository's root: the nearest folder above this file with a package.json (from the sources or from dist/). */
/** The nearest directory above `from` holding docs/router.md (router/ has a package.json of its own, so not the nearest package). */
function repositoryRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'docs', 'router.md'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no docs/router.md above ${from}`);
  }
}

// `policy-docs.ts [FILE]`: FILE defaults to the repository's docs/router.md.
if (require.main === module) {
  const path = process.argv[2] ?? join(repositoryRoot(__dirname), 'docs', 'router.md');
  const before = readFileSync(path, 'utf8');
  const after = withGeneratedSections(before);
  if (after !== before) writeFileSync(path, after);
  process.stdout.write(`${path}: ${after === before ? 'up to date' : 'updated'}\n`);
}
