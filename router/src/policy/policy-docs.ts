import { policyOptionSpecs } from '../config/config-sources';
import { optionRange, type PolicyDefinition } from './policy-definition';
import { DEFAULT_POLICY_NAME, POLICY_DEFINITIONS, POLICY_NAMES } from './policy-registry';

/**
 * The docs' policy tables, generated from the registry. docs/router.md holds them between
 * `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` markers; a test fails when they differ, and
 * `npm run docs:policies` rewrites them.
 */
const definitions = POLICY_DEFINITIONS as readonly PolicyDefinition[];

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function policyTable(): string {
  const rows = definitions.map(
    (d) =>
      `| \`${d.name}\`${d.name === DEFAULT_POLICY_NAME ? ' (default)' : ''} | ${cell(d.description)} | ${d.reasons.map((r) => `\`${r}\``).join(', ')} |`,
  );
  return ['| `--policy` | behaviour | reasons |', '| --- | --- | --- |', ...rows].join('\n');
}

export function policyOptionsTable(): string {
  const rows = definitions.flatMap((d) =>
    d.options.map((o) => `| \`${d.name}\` | \`${o.name}\` | ${o.type} | ${optionRange(o)} | ${o.default} | ${cell(o.doc)} |`),
  );
  return ['| policy | option | type | allowed | default | what it does |', '| --- | --- | --- | --- | --- | --- |', ...rows].join('\n');
}

/** Rows of the configuration table for --policy and every policy option flag. */
export function policyConfigRows(): string {
  const rows = [
    `| \`--policy <spec>\` | \`PREFIX_ROUTER_POLICY\` | \`policy.name\` (or \`"policy": "name?opt=value"\`) | \`${DEFAULT_POLICY_NAME}\` | ${POLICY_NAMES.map((n) => `\`${n}\``).join(', ')}, each optionally \`?option=value&…\` |`,
    ...policyOptionSpecs().map((o) => {
      const [policies] = o.description.split(':', 1);
      const option = definitions.flatMap((d) => d.options).find((x) => `policy.${x.name}` === o.path)!;
      return `| \`${o.flag} <${o.valueName}>\` | \`${o.env}\` | \`${o.path}\` | ${option.default} | ${optionRange(option)} (${policies}) |`;
    }),
  ];
  return ['| flag | environment variable | file key | default | allowed |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

export const GENERATED_SECTIONS: Readonly<Record<string, () => string>> = {
  policies: policyTable,
  'policy-options': policyOptionsTable,
  'policy-config': policyConfigRows,
};

/** `text` with every generated section replaced by its current content. */
export function withGeneratedSections(text: string): string {
  let out = text;
  for (const [name, render] of Object.entries(GENERATED_SECTIONS)) {
    const start = `<!-- generated:${name} -->`;
    const end = `<!-- /generated:${name} -->`;
    const i = out.indexOf(start);
    const j = out.indexOf(end);
    if (i < 0 || j < i) continue;
    out = `${out.slice(0, i + start.length)}\n${render()}\n${out.slice(j)}`;
  }
  return out;
}
