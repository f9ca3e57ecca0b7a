/**
 * Every TypeScript snippet a user can copy from README.md, docs/*.md and the two packages' READMEs, as a complete
 * file: test/package/npm-pack.test.ts writes each into a fresh `cdk init` app that installed the packed tarballs,
 * compiles them all with the app's own tsconfig and synthesizes every CDK app among them.
 *
 * Kinds:
 *   - a CDK app imports `cdk-prefix-aware-llm` and keeps its `App` (`cdk init`'s bin/ file with the stack in it):
 *     it must name an `instanceType`, and state its hourly cost with the price's source and date (the test checks
 *     the figure against the synthesized template and the project's price list);
 *   - a program (the router's library, the SageMaker client) is a complete file too: imports, and an async `main`
 *     where it awaits (the `cdk init` tsconfig compiles to CommonJS, which has no top-level await);
 *   - a sketch (a type's shape, printed output) is not a program: each is listed in SKETCHES with its reason.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fencedBlocks } from './documented-commands';

export interface TsSnippet {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly text: string;
  readonly kind: 'cdk-app' | 'program' | 'sketch';
}

/** The construct package's name, as a snippet imports it. */
export const CONSTRUCT_PACKAGE = 'cdk-prefix-aware-llm';

/**
 * Blocks that show a shape, not a program, each for a stated reason. Every entry must match exactly one block (the
 * test checks), so a new snippet cannot slip out of compilation by accident.
 */
export const SKETCHES: readonly { readonly file: string; readonly contains: string; readonly reason: string }[] = [
  {
    file: 'docs/emulator.md',
    contains: 'const engine = new EngineModel(',
    reason:
      'the EngineModel API as signatures (optional fields marked `?`); the engine model is exercised by test/router/emulator/',
  },
  {
    file: 'docs/workloads.md',
    contains: 'type WorkloadRequest = ChatWorkloadRequest',
    reason: 'the shape of a workload request, field by field; the type itself is router/src/workload/',
  },
  {
    file: 'docs/workloads.md',
    contains: 'interface RequestRecord {',
    reason: 'the shape of a request record, field by field; the type itself is router/src/report/',
  },
];

export const SNIPPET_DOCS = (root: string): string[] => [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
  'lib/README.md',
  'router/README.md',
];

function kindOf(file: string, text: string): TsSnippet['kind'] {
  if (SKETCHES.some((s) => s.file === file && text.includes(s.contains))) return 'sketch';
  return new RegExp(`from '${CONSTRUCT_PACKAGE}'`).test(text) ? 'cdk-app' : 'program';
}

/** Fenced ```ts / ```typescript blocks of a markdown text. */
export function tsSnippets(markdown: string, file: string): TsSnippet[] {
  return fencedBlocks(markdown, file, ['ts', 'typescript']).map((block) => ({
    ...block,
    kind: kindOf(file, block.text),
  }));
}

export function documentedSnippets(root: string): TsSnippet[] {
  return SNIPPET_DOCS(root).flatMap((f) => tsSnippets(readFileSync(join(root, f), 'utf8'), f));
}

/** A file name for the snippet inside the app's bin/: `docs-construct-md-11.ts`. */
export function snippetFileName(snippet: TsSnippet): string {
  return `${snippet.file.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase()}-${snippet.line}.ts`;
}

/** The line every CDK snippet opens its cost statement with. */
export const COST_LINE = /\/\/ Cost while deployed: ([^\n]*?) ≈ \$([\d,]+(?:\.\d+)?)\/h\b/;

/**
 * What a CDK snippet says its fleet costs an hour (`// Cost while deployed: 2 × ml.g6e.2xlarge ≈ $5.20/h (…)`),
 * or undefined when it does not say.
 */
export function statedHourlyCost(text: string): { fleet: string; usdPerHour: number } | undefined {
  const m = COST_LINE.exec(text);
  return m ? { fleet: m[1], usdPerHour: Number(m[2].replace(/,/g, '')) } : undefined;
}
