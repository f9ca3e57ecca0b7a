import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, symlinkSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import * as ts from 'typescript';

/**
 * The router package's public entry points are its `exports` map (Node) and `typesVersions` (TypeScript's
 * `node10` resolution). Every `cdk-prefix-aware-llm-router/…` import the docs and README show is resolved here
 * the way a project that installed the package resolves it: through node_modules/cdk-prefix-aware-llm-router
 * (router/package.json, with `dist` linked to this checkout's build, which has the router build's layout), by
 * Node's own resolver and by the TypeScript compiler under both resolution modes. Runs after the build
 * (`npm test` compiles first); test/package/npm-pack.test.ts installs the real tarball.
 */
const ROOT = join(__dirname, '..', '..');
const ROUTER = join(ROOT, 'router');
const PACKAGE = 'cdk-prefix-aware-llm-router';

function documentedSpecifiers(): string[] {
  const files = [
    join(ROOT, 'README.md'),
    join(ROUTER, 'README.md'),
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(ROOT, 'docs', f)),
  ];
  const found = new Set<string>();
  for (const file of files) {
    for (const m of readFileSync(file, 'utf8').matchAll(/from '(cdk-prefix-aware-llm-router(?:\/[^']*)?)'/g))
      found.add(m[1]);
  }
  return [...found].sort();
}

const consumer = mkdtempSync(join(tmpdir(), 'package-exports-'));
const installed = join(consumer, 'node_modules', PACKAGE);
mkdirSync(installed, { recursive: true });
copyFileSync(join(ROUTER, 'package.json'), join(installed, 'package.json'));
symlinkSync(join(ROOT, 'dist'), join(installed, 'dist'), 'dir');
symlinkSync(join(ROUTER, 'client'), join(installed, 'client'), 'dir');
const consumerFile = join(consumer, 'index.ts');
/**
 * Node's own resolver (jest replaces require's), run in the consumer project: each specifier's resolved file,
 * or the error code when Node refuses it.
 */
function nodeResolve(specifiers: readonly string[]): Record<string, string> {
  const script = `const out = {}; for (const s of ${JSON.stringify(specifiers)}) { try { out[s] = require.resolve(s); } catch (e) { out[s] = 'error:' + e.code; } } process.stdout.write(JSON.stringify(out));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: consumer, encoding: 'utf8' })) as Record<
    string,
    string
  >;
}

describe('when a project that installed the router package imports it', () => {
  const documented = documentedSpecifiers();

  test('GIVEN the docs THEN they import the router package through several entry points', () => {
    expect(documented).toEqual(
      expect.arrayContaining([`${PACKAGE}/benchmark`, `${PACKAGE}/server`, `${PACKAGE}/emulator`]),
    );
  });

  const ENTRY_POINTS = [PACKAGE, `${PACKAGE}/client`];
  const INTERNAL = `${PACKAGE}/dist/router/src/server/proxy.js`;
  const byNode = nodeResolve([...new Set([...documented, ...ENTRY_POINTS]), INTERNAL]);

  test.each([...new Set([...documented, ...ENTRY_POINTS])])(
    'GIVEN the import %s THEN Node resolves it to a built file',
    (specifier) => {
      const resolved = byNode[specifier];
      expect(existsSync(resolved)).toBe(true);
      expect(resolved.startsWith(join(ROOT, 'dist'))).toBe(true);
    },
  );

  test.each(
    documented.flatMap(
      (s) =>
        [
          [s, 'node10'],
          [s, 'node16'],
        ] as const,
    ),
  )('GIVEN %s THEN TypeScript (%s resolution) finds its declarations', (specifier, mode) => {
    const options: ts.CompilerOptions =
      mode === 'node10'
        ? { moduleResolution: ts.ModuleResolutionKind.Node10 }
        : { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16 };
    const { resolvedModule } = ts.resolveModuleName(specifier, consumerFile, options, ts.sys);
    expect(resolvedModule?.resolvedFileName).toMatch(/\.d\.ts$/);
    expect(existsSync(resolvedModule!.resolvedFileName)).toBe(true);
  });

  test('GIVEN an internal module that is not an entry point THEN Node refuses it', () => {
    expect(byNode[INTERNAL]).toBe('error:ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  test.each(ENTRY_POINTS)('GIVEN the client entry point %s THEN it loads the client classes', (entry) => {
    const client = require(byNode[entry]) as Record<string, unknown>;
    expect(typeof client.PrefixAwareLlmClient).toBe('function');
    expect(typeof client.LlmThrottledError).toBe('function');
    expect(typeof client.createRuntimeClient).toBe('function');
  });

  test('GIVEN the published files THEN everything the map points at ships', () => {
    const pkg = JSON.parse(readFileSync(join(ROUTER, 'package.json'), 'utf8')) as {
      files: string[];
      exports: Record<string, string | { default: string }>;
    };
    // package.json itself always ships.
    const targets = Object.values(pkg.exports)
      .map((t) => (typeof t === 'string' ? t : t.default))
      .filter((t) => t !== './package.json');
    for (const target of targets) expect(pkg.files.some((f) => target.replace(/^\.\//, '').startsWith(f))).toBe(true);
  });
});
