/**
 * The jsii-diff gate of lib/scripts/check-jsii.sh (CI): the baseline assembly in lib/api-baseline against an
 * assembly with one breaking change fails, naming the change's key; the same key in an allow-list passes; and every
 * key of the repository's allow-list has a reason. Runs on the committed baseline, so it needs no jsii build.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const BASELINE = join(ROOT, 'lib', 'api-baseline');
const ALLOW_LIST = join(BASELINE, 'allowed-breaking-changes.txt');
const JSII_DIFF = join(ROOT, 'node_modules', 'jsii-diff', 'bin', 'jsii-diff');

interface Method {
  name: string;
  static?: boolean;
}
interface Assembly {
  types: Record<string, { methods?: Method[] }>;
}

const copies: string[] = [];
afterAll(() => copies.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A copy of the baseline under node_modules/.cache, so jsii-reflect resolves aws-cdk-lib and constructs. */
function assemblyCopy(change: (assembly: Assembly) => void): string {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'jsii-diff-test-'));
  copies.push(dir);
  cpSync(join(BASELINE, 'package.json'), join(dir, 'package.json'));
  const assembly = JSON.parse(readFileSync(join(BASELINE, '.jsii'), 'utf8')) as Assembly;
  change(assembly);
  writeFileSync(join(dir, '.jsii'), JSON.stringify(assembly));
  return dir;
}

function jsiiDiff(updated: string, ignoreFile?: string): { status: number | null; output: string } {
  const args = [
    JSII_DIFF,
    '--keys',
    '--error-on',
    'all',
    ...(ignoreFile ? ['--ignore-file', ignoreFile] : []),
    BASELINE,
    updated,
  ];
  const run = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION: '20' },
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

jest.setTimeout(180_000);

describe('when jsii-diff compares an assembly with the baseline', () => {
  const REMOVED_KEY = 'removed:cdk-prefix-aware-llm.RoutingStrategy.prefixAware';
  const broken = assemblyCopy((assembly) => {
    const strategy = assembly.types['cdk-prefix-aware-llm.RoutingStrategy'];
    strategy.methods = strategy.methods!.filter((m) => m.name !== 'prefixAware');
  });

  test('GIVEN the baseline itself THEN there is no change and it passes', () => {
    const result = jsiiDiff(
      assemblyCopy(() => undefined),
      ALLOW_LIST,
    );
    expect(result).toEqual({ status: 0, output: expect.not.stringContaining('removed:') });
  });

  test('GIVEN a removed static method THEN it fails and prints the key to allow it by', () => {
    const result = jsiiDiff(broken, ALLOW_LIST);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain(REMOVED_KEY);
  });

  test('GIVEN the removed method listed in an allow-list THEN it passes', () => {
    const allow = join(broken, 'allowed.txt');
    writeFileSync(allow, `# reason: test\n${REMOVED_KEY}\n`);
    expect(jsiiDiff(broken, allow).status).toBe(0);
  });

  test('GIVEN the repository allow-list THEN every key follows a # reason line', () => {
    const lines = readFileSync(ALLOW_LIST, 'utf8')
      .split('\n')
      .map((l) => l.trim());
    const unexplained = lines.filter(
      (line, i) => line !== '' && !line.startsWith('#') && !(lines[i - 1] ?? '').startsWith('#'),
    );
    expect(unexplained).toEqual([]);
  });
});
