import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compiledDist } from '../../compiled-dist';
import { mergeRows } from '../../../router/bench/chaos/run-chaos';

const ROOT = join(__dirname, '..', '..', '..');

function runChaos(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(
    process.execPath,
    // What `npm run test:chaos` runs: the compiled script (built when stale: test/compiled-dist.ts).
    [join(compiledDist(), 'router', 'bench', 'chaos', 'run-chaos.js'), ...args],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 90_000,
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('when npm run test:chaos is run (docs/reliability.md)', () => {
  it('GIVEN --only never-answers --no-write (as documented, one scenario) THEN it passes and prints its row', () => {
    const r = runChaos(['--only', 'never-answers', '--no-write']);
    expect(r.stderr).toContain('never-answers: passed');
    expect(r.stdout).toMatch(/^\| `never-answers` .* \| passed \|/m);
    expect(r.status).toBe(0);
  }, 120_000);

  it('GIVEN a bad --soak-seconds or an unknown scenario THEN it exits non-zero naming the option, range and value', () => {
    const bad = runChaos(['--only', 'soak', '--soak-seconds', '0', '--no-write']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('--soak-seconds must be an integer between 1 and 86400 (got "0")');
    const unknown = runChaos(['--only', 'nope', '--no-write']);
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toContain('--only: unknown scenario nope');
  }, 120_000);

  it('GIVEN a partial run THEN only its rows are replaced in the docs table, in scenario order', () => {
    const before = [
      '| scenario | result | figures | measured |',
      '| --- | --- | --- | --- |',
      '| `fuzz` old | passed | a | d |',
      '| `soak` old | passed | b | d |',
    ].join('\n');
    const merged = mergeRows(
      before,
      new Map([
        ['soak', '| `soak` new | passed | c | e |'],
        ['kill-backend', '| `kill-backend` k | passed | k | e |'],
      ]),
    );
    expect(merged.split('\n').slice(2)).toEqual([
      '| `kill-backend` k | passed | k | e |',
      '| `soak` new | passed | c | e |',
      '| `fuzz` old | passed | a | d |',
    ]);
  });

  it('GIVEN docs/reliability.md THEN every scenario it lists exists', () => {
    const docs = readFileSync(join(ROOT, 'docs', 'reliability.md'), 'utf8');
    for (const name of [
      'kill-backend',
      'never-answers',
      'gray-failure',
      'error-statuses',
      'client-aborts',
      'slow-clients',
      'soak',
      'sigterm',
      'fuzz',
    ]) {
      expect(docs).toContain(`\`${name}\``);
    }
  });
});
