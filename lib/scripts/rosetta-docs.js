#!/usr/bin/env node
// Translates the construct's TypeScript snippets (those importing cdk-prefix-aware-llm) of README.md and docs/*.md with jsii-rosetta in strict mode (a snippet
// that does not compile against the built construct library fails) and keeps each snippet's Python form in the
// doc, as a ```python block right after the ```ts block it was generated from.
//   node lib/scripts/rosetta-docs.js          rewrite the Python blocks
//   node lib/scripts/rosetta-docs.js --check  fail when a snippet does not compile or a Python block is stale (CI)
// Needs the jsii build of lib/ (npm run build -w cdk-prefix-aware-llm: lib/dist and lib/.jsii). Snippets name
// free variables with `declare const x: Type;`, which rosetta renders as a comment (aws-cdk's convention).
'use strict';
const { readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const { SnippetParameters, TargetLanguage, Translator, typeScriptSnippetFromVisibleSource } = require('jsii-rosetta');

const LIB = join(__dirname, '..');
const ROOT = join(LIB, '..');
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
/** Snippets of the construct library; the router's (cdk-prefix-aware-llm-router) are TypeScript-only and compiled by test/installed/. */
const CONSTRUCT_IMPORT = /from 'cdk-prefix-aware-llm'/;
const MARKER =
  '<!-- Python: generated from the TypeScript above by jsii-rosetta (node lib/scripts/rosetta-docs.js) -->';
const check = process.argv.includes('--check');

/** The doc with every ```ts block followed by its generated Python block (replacing a previous one). */
function withPython(file, text, failures) {
  const lines = text.split('\n');
  const out = [];
  let translated = 0;
  for (let i = 0; i < lines.length; i++) {
    out.push(lines[i]);
    if (lines[i].trim() !== '```ts') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    const source = lines.slice(start, end).join('\n');
    for (let j = start; j <= end; j++) out.push(lines[j]);
    i = end;
    // Drop the previously generated block (marker, blank line and fence) so the new one replaces it.
    if (lines[i + 1] === '' && lines[i + 2] === MARKER) {
      let k = i + 3;
      while (k < lines.length && !lines[k].startsWith('```python')) k++;
      k++;
      while (k < lines.length && lines[k].trim() !== '```') k++;
      i = k;
    }
    if (!CONSTRUCT_IMPORT.test(source)) continue;
    const location = { api: { api: 'file', fileName: file }, field: { field: 'markdown', line: start } };
    const snippet = typeScriptSnippetFromVisibleSource(source, location, true, {
      [SnippetParameters.$PROJECT_DIRECTORY]: LIB,
      [SnippetParameters.$COMPILATION_DIRECTORY]: LIB,
    });
    const before = translator.diagnostics.length;
    const result = translator.translate(snippet, [TargetLanguage.PYTHON]);
    const errors = translator.diagnostics.slice(before).filter((d) => d.isError);
    if (errors.length > 0) {
      failures.push(
        `${file}:${start}: the TypeScript snippet does not compile:\n${errors.map((d) => `  ${d.formattedMessage.trim()}`).join('\n')}`,
      );
      continue;
    }
    const python = result.get(TargetLanguage.PYTHON).source.trimEnd();
    out.push('', MARKER, '', '```python', ...python.split('\n'), '```');
    translated++;
  }
  return { text: out.join('\n'), translated };
}

/** One translator (one TypeScript compiler) for all snippets; each snippet's diagnostics are the new ones. */
const translator = new Translator(true);
const failures = [];
const started = Date.now();
let total = 0;
for (const doc of DOCS) {
  const path = join(ROOT, doc);
  const text = readFileSync(path, 'utf8');
  const { text: updated, translated } = withPython(doc, text, failures);
  total += translated;
  if (updated === text) continue;
  if (check)
    failures.push(
      `${doc}: its Python blocks are not what rosetta makes of its TypeScript; run node ${relative(process.cwd(), __filename)}`,
    );
  else writeFileSync(path, updated);
}
if (failures.length > 0) {
  process.stderr.write(`${failures.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(
  `rosetta (strict): ${total} construct snippets in README.md and docs/ compile and translate to Python${check ? ', docs up to date' : ''} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
);
