/**
 * Every command in README.md and docs/*.md runs (test/docs/documented-commands.ts says how they are bounded
 * and what is substituted). A documented command can no longer fail unnoticed.
 */
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledDist } from '../compiled-dist';
import {
  commandsOf,
  documentedBlocks,
  freeRange,
  NOT_RUN_HERE,
  notRunReason,
  prepareBlock,
  runBlockScript as run,
  runnableBlocks,
  type ShellBlock,
} from './documented-commands';

const ROOT = join(__dirname, '..', '..');

jest.setTimeout(600_000);

const all = runnableBlocks(documentedBlocks(ROOT));
const blocks = all.filter((b) => notRunReason(b) === undefined);

describe('documented commands', () => {
  let scratch: string;

  beforeAll(() => {
    compiledDist();
    scratch = mkdtempSync(join(tmpdir(), 'documented-commands-'));
    for (const name of ['dist', 'router', 'node_modules', 'package.json', 'tsconfig.json'])
      symlinkSync(join(ROOT, name), join(scratch, name));
    cpSync(join(ROOT, 'docs'), join(scratch, 'docs'), { recursive: true });
  });

  afterAll(() => {
    rmSync(scratch, { recursive: true, force: true });
  });

  test('GIVEN the docs THEN there are commands to run, among them the README live sequence with cold emulators', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    const readme = blocks
      .filter((b) => b.file === 'README.md')
      .map((b) => b.text)
      .join('\n');
    expect(readme).toMatch(/emulate [^\n]*--log-level warn/);
    expect(readme).toMatch(/serve [^\n]*--log-level warn/);
    expect(readme).toContain('--append');
    expect(readme).toContain('--backend-metrics');
    expect(readme).toContain('trace:mooncake-synthetic');
  });

  test('GIVEN the blocks not run here THEN each has a reason and matches exactly one block', () => {
    for (const e of NOT_RUN_HERE) {
      expect({
        entry: e.contains,
        matches: all.filter((b) => b.file === e.file && b.text.includes(e.contains)).length,
      }).toEqual({ entry: e.contains, matches: 1 });
    }
    expect(all.length - blocks.length).toBe(NOT_RUN_HERE.length);
  });

  test('GIVEN a block not run because another runs its commands THEN that block is run and holds each of them word for word', () => {
    const duplicates = NOT_RUN_HERE.filter((e) => e.sameCommandsAs !== undefined);
    expect(duplicates.length).toBeGreaterThan(0);
    for (const e of duplicates) {
      const skipped = all.find((b) => b.file === e.file && b.text.includes(e.contains))!;
      const runners = blocks.filter(
        (b) => b.file === e.sameCommandsAs!.file && b.text.includes(e.sameCommandsAs!.contains),
      );
      expect({ entry: e.contains, runners: runners.length }).toEqual({ entry: e.contains, runners: 1 });
      const run = new Set(commandsOf(runners[0].text));
      expect({ entry: e.contains, notRunElsewhere: commandsOf(skipped.text).filter((c) => !run.has(c)) }).toEqual({
        entry: e.contains,
        notRunElsewhere: [],
      });
    }
  });

  test('GIVEN an emulated mixed fleet (COUNT:PROFILE groups) THEN every port it opens is mapped and waited for', () => {
    const block: ShellBlock = {
      file: 'docs/x.md',
      line: 1,
      text: 'prefix-router emulate --instances 2:p5-llama-3.1-70b,1:p4d-llama-3.1-70b --port 8000 --time-scale 10',
    };
    const { script, applied } = prepareBlock(block, (span) => 30_000 + span);
    expect(applied).toContain('ports 8000–8002 → 30003–30005');
    expect(script.match(/__wait_port \$\(\( 30003 \+ \d \)\)/g)).toEqual([
      '__wait_port $(( 30003 + 0 ))',
      '__wait_port $(( 30003 + 1 ))',
      '__wait_port $(( 30003 + 2 ))',
    ]);
  });

  test('GIVEN plan commands THEN one without --jobs runs its simulations in one thread, at the end of its continued line; one with --jobs keeps it', () => {
    const block: ShellBlock = {
      file: 'docs/x.md',
      line: 1,
      text: "prefix-router plan --workload trace:t.jsonl \\\n  --slo 'p90-ttft<=2s'   # sized\nprefix-router plan --workload trace:t.jsonl --jobs 4",
    };
    const { script, applied } = prepareBlock(block, () => 0);
    expect(script).toContain("--slo 'p90-ttft<=2s' --jobs 1 # sized\n");
    expect(script).toMatch(/ --jobs 4$/);
    expect(script).not.toContain('--jobs 4 --jobs');
    expect(applied.filter((a) => a === 'plan → --jobs 1')).toHaveLength(1);
  });

  test.each(blocks.map((b): [string, ShellBlock] => [`${b.file}:${b.line}`, b]))(
    'GIVEN the block at %s THEN it runs to exit code 0',
    async (_where, block) => {
      const prepared = prepareBlock(block, () => 0);
      // Ports are chosen just before running, so they are free now.
      const span = /ports (\d+)–(\d+)/.exec(prepared.applied.join('\n'));
      const base = span ? await freeRange(Number(span[2]) - Number(span[1]) + 1) : 0;
      const { script, applied } = prepareBlock(block, () => base);
      writeFileSync(join(scratch, 'last-block.sh'), script);
      const { code, output } = await run(script, scratch, 300_000);
      if (code !== 0)
        throw new Error(
          `${block.file}:${block.line} exited ${code}\napplied: ${applied.join('; ')}\n--- script ---\n${script}\n--- output (last 4000 chars) ---\n${output.slice(-4000)}`,
        );
      expect(code).toBe(0);
    },
  );
});
