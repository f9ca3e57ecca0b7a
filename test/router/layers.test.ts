import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The dependency boundaries of router/src (router/layers.js), checked by dependency-cruiser with the rules in
 * router/dependency-cruiser.config.js: the real tree must have no violation, and a throw-away tree holding one
 * import for every pair of folders must be reported for exactly the pairs the map forbids.
 */
const ROOT = join(__dirname, '..', '..');
const CONFIG = join(ROOT, 'router', 'dependency-cruiser.config.js');
const DEPCRUISE = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const { particularPolicyImports } = require(join(ROOT, 'router', 'policy-imports.js')) as {
  particularPolicyImports: (root: string) => string[];
};
const { LAYERS, EXCEPTIONS } = require(join(ROOT, 'router', 'layers.js')) as {
  LAYERS: Record<string, readonly string[]>;
  EXCEPTIONS: ReadonlyArray<{ from: string; to: string; reason: string }>;
};

interface Violation {
  readonly from: string;
  readonly to: string;
  readonly rule: { readonly name: string };
}

/** Cruises `paths` (relative to `cwd`) with the project's rules; returns the violations. */
function cruise(cwd: string, paths: readonly string[]): Violation[] {
  let out: string;
  try {
    out = execFileSync(process.execPath, [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', ...paths], {
      cwd,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
  } catch (err) {
    // depcruise exits non-zero when it finds errors; its JSON report is still on stdout.
    out = (err as { stdout?: string }).stdout ?? '';
    if (out === '') throw err;
  }
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

const folderOf = (path: string): string => /router\/src\/([^/]+)\//.exec(path)![1];

describe('when the router sources are checked against the layer map', () => {
  test('GIVEN router/src THEN every folder has a place in the map', () => {
    const folders = readdirSync(join(ROOT, 'router', 'src')).filter((f) =>
      statSync(join(ROOT, 'router', 'src', f)).isDirectory(),
    );
    expect(folders.filter((f) => !(f in LAYERS))).toEqual([]);
  });

  test('GIVEN the map THEN it keeps the documented order: protocol → policy/state → core → server/simulator → cli', () => {
    const below = (folder: string, others: readonly string[]) => others.filter((o) => LAYERS[folder].includes(o));
    expect(below('protocol', ['state', 'policy', 'core', 'server', 'sim', 'cli'])).toEqual([]);
    expect(below('state', ['policy', 'core', 'server', 'sim', 'cli'])).toEqual([]);
    expect(below('policy', ['core', 'server', 'sim', 'cli'])).toEqual([]);
    expect(below('core', ['server', 'sim', 'cli'])).toEqual([]);
    expect(below('server', ['sim', 'cli'])).toEqual([]);
    expect(below('sim', ['server', 'cli'])).toEqual([]);
    for (const shared of ['common', 'workload', 'report', 'feed'])
      expect(below(shared, ['server', 'sim', 'benchmark', 'aws', 'cli'])).toEqual([]);
    expect(LAYERS.common).toEqual([]);
    expect(Object.keys(LAYERS).filter((f) => f !== 'cli' && LAYERS[f].includes('cli'))).toEqual([]);
  });

  test('GIVEN the real sources (router/src and lib) THEN dependency-cruiser finds no violation', () => {
    const violations = cruise(ROOT, ['router/src', 'lib']);
    expect(violations.map((v) => `${v.from} → ${v.to} (${v.rule.name})`)).toEqual([]);
  });

  test('GIVEN a tree with one import for every pair of folders THEN exactly the pairs the map forbids are reported', () => {
    const tree = mkdtempSync(join(tmpdir(), 'layers-'));
    const folders = Object.keys(LAYERS);
    for (const folder of folders) {
      mkdirSync(join(tree, 'router', 'src', folder), { recursive: true });
      writeFileSync(join(tree, 'router', 'src', folder, 'target.ts'), 'export const target = 1;\n');
    }
    for (const from of folders) {
      for (const to of folders.filter((f) => f !== from)) {
        writeFileSync(
          join(tree, 'router', 'src', from, `uses-${to}.ts`),
          `import { target } from '../${to}/target';\nexport const used = target;\n`,
        );
      }
    }
    // The excepted file may import its one extra folder, and nothing else beyond the map.
    for (const e of EXCEPTIONS)
      writeFileSync(join(tree, e.from), `import { target } from '../${e.to}/target';\nexport const used = target;\n`);
    // The library's own boundaries: router/src never imports tests, lib never imports the router.
    mkdirSync(join(tree, 'test'), { recursive: true });
    mkdirSync(join(tree, 'lib'), { recursive: true });
    writeFileSync(join(tree, 'test', 'helper.ts'), 'export const helper = 1;\n');
    writeFileSync(
      join(tree, 'router', 'src', 'common', 'uses-test.ts'),
      "import { helper } from '../../../test/helper';\nexport const used = helper;\n",
    );
    writeFileSync(
      join(tree, 'lib', 'construct.ts'),
      "import { target } from '../router/src/common/target';\nexport const used = target;\n",
    );
    // The server and the simulator may import policy/ but not one policy's module (they use its capabilities).
    writeFileSync(join(tree, 'router', 'src', 'policy', 'cache-aware-policy.ts'), 'export const blocks = 1;\n');
    writeFileSync(join(tree, 'router', 'src', 'policy', 'routing-policy.ts'), 'export const capability = 1;\n');
    for (const loop of ['server', 'sim']) {
      writeFileSync(
        join(tree, 'router', 'src', loop, 'uses-a-policy.ts'),
        "import { blocks } from '../policy/cache-aware-policy';\nimport { capability } from '../policy/routing-policy';\nexport const used = blocks + capability;\n",
      );
    }
    // Two modules that import each other: one cycle.
    writeFileSync(
      join(tree, 'router', 'src', 'common', 'cycle-a.ts'),
      "import { b } from './cycle-b';\nexport const a = (): number => b() + 1;\n",
    );
    writeFileSync(
      join(tree, 'router', 'src', 'common', 'cycle-b.ts'),
      "import { a } from './cycle-a';\nexport const b = (): number => (a === undefined ? 0 : 1);\n",
    );

    const reported = cruise(tree, ['router', 'lib', 'test'])
      .map((v) =>
        v.rule.name === 'no-circular'
          ? `cycle in ${folderOf(v.from)}`
          : v.rule.name === 'routing-loops-use-policy-capabilities'
            ? `${folderOf(v.from)} → ${v.to.split('/').pop()}`
            : v.from.startsWith('lib/')
              ? 'lib → router'
              : v.to.startsWith('test/')
                ? `${folderOf(v.from)} → test`
                : `${folderOf(v.from)} → ${folderOf(v.to)}`,
      )
      .sort();
    const expected = [
      ...folders.flatMap((from) =>
        folders.filter((to) => to !== from && !LAYERS[from].includes(to)).map((to) => `${from} → ${to}`),
      ),
      'common → test',
      'lib → router',
      'cycle in common',
      'server → cache-aware-policy.ts',
      'sim → cache-aware-policy.ts',
    ].sort();
    // Each forbidden pair once (the excepted file's import is allowed, so its folder's pair comes only from uses-*.ts).
    expect(reported).toEqual(expected);
    expect(expected).toContain('protocol → server');
    expect(expected).toContain('server → sim');
  });
});

describe('when the server and the simulator import through policy/index.ts (router/policy-imports.js)', () => {
  test('GIVEN the real sources THEN no name they take from the barrel is declared in a particular policy', () => {
    expect(particularPolicyImports(ROOT)).toEqual([]);
  });

  test('GIVEN a policy class, a namespace import and an export * through the barrel THEN each is reported; the interface is not', () => {
    const tree = mkdtempSync(join(tmpdir(), 'policy-imports-'));
    const src = (path: string, text: string) => {
      mkdirSync(join(tree, 'router', 'src', path, '..'), { recursive: true });
      writeFileSync(join(tree, 'router', 'src', path), text);
    };
    src('policy/cache-aware-policy.ts', 'export class CacheAwarePolicy {}\n');
    src('policy/routing-policy.ts', 'export interface RoutingPolicy {\n  readonly name: string;\n}\n');
    src(
      'policy/index.ts',
      "export * from './routing-policy';\nexport { CacheAwarePolicy } from './cache-aware-policy';\n",
    );
    src(
      'server/uses-class.ts',
      "import { CacheAwarePolicy, type RoutingPolicy } from '../policy';\nexport const used: RoutingPolicy | CacheAwarePolicy | undefined = undefined;\n",
    );
    src(
      'server/uses-interface.ts',
      "import type { RoutingPolicy } from '../policy/index';\nexport const used: RoutingPolicy | undefined = undefined;\n",
    );
    src('sim/nested/uses-namespace.ts', "import * as policies from '../../policy';\nexport const used = policies;\n");
    src('sim/passes-on.ts', "export * from '../policy';\n");
    src('core/uses-class.ts', "import { CacheAwarePolicy } from '../policy';\nexport const used = CacheAwarePolicy;\n");

    expect(particularPolicyImports(tree).sort()).toEqual([
      'router/src/server/uses-class.ts imports CacheAwarePolicy through policy/index.ts from router/src/policy/cache-aware-policy.ts',
      'router/src/sim/nested/uses-namespace.ts takes every name of policy/index.ts (* hides whether one is a particular policy)',
      'router/src/sim/passes-on.ts takes every name of policy/index.ts (* hides whether one is a particular policy)',
    ]);
    rmSync(tree, { recursive: true, force: true });
  });
});
