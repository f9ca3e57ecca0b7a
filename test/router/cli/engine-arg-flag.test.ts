import { Command } from 'commander';
import { register as registerDemo, parseDemoFlags } from '../../../router/src/cli/demo-command';
import { register as registerEmulate, parseEmulateFlags } from '../../../router/src/cli/emulate-command';
import { register as registerPlan, parsePlanFlags } from '../../../router/src/cli/plan-command';
import { register as registerSimulate, parseSimulateFlags } from '../../../router/src/cli/simulate-command';
import { ConfigError } from '../../../router/src/common/config-error';
import { ENGINE_ARGS, parseEngineArg, parseEngineArgs } from '../../../router/src/emulator/engine-args';

/** The raw flags commander hands a command's action for these words. */
function parsed(register: (program: Command) => void, name: string, words: string[]): Record<string, unknown> {
  const program = new Command().exitOverride();
  register(program);
  const sub = program.commands.find((c) => c.name() === name)!;
  let flags: Record<string, unknown> = {};
  sub.exitOverride().action((f: Record<string, unknown>) => {
    flags = f;
  });
  program.parse([name, ...words], { from: 'user' });
  return flags;
}

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('--engine-arg NAME=VALUE', () => {
  describe('when one argument is parsed', () => {
    test.each([
      ['max-num-batched-tokens', 0, false],
      ['max-num-batched-tokens', 1, true],
      ['max-num-batched-tokens', 10_000_000, true],
      ['max-num-batched-tokens', 10_000_001, false],
      ['max-num-seqs', 0, false],
      ['max-num-seqs', 1, true],
      ['max-num-seqs', 1_000_000, true],
      ['max-num-seqs', 1_000_001, false],
      ['long-prefill-token-threshold', -1, false],
      ['long-prefill-token-threshold', 0, true],
      ['long-prefill-token-threshold', 100_000_000, true],
      ['long-prefill-token-threshold', 100_000_001, false],
    ])('GIVEN %s=%i THEN accepted: %s (refusals name the flag and its range)', (flag, value, ok) => {
      if (ok) expect(parseEngineArg(`${flag}=${value}`)).toEqual({ flag, value });
      else
        expect(problemsOf(() => parseEngineArg(`${flag}=${value}`))[0]).toMatch(
          new RegExp(`^--engine-arg ${flag} must be an integer between \\d+ and \\d+ \\(got "${value}"\\)$`),
        );
    });

    test('GIVEN scheduling-policy THEN fcfs and priority are accepted and anything else is refused with the choices', () => {
      expect(parseEngineArg('scheduling-policy=priority')).toEqual({ flag: 'scheduling-policy', value: 'priority' });
      expect(parseEngineArg('scheduling-policy=fcfs').value).toBe('fcfs');
      expect(problemsOf(() => parseEngineArg('scheduling-policy=sjf'))).toEqual([
        '--engine-arg scheduling-policy must be one of fcfs, priority (got "sjf")',
      ]);
    });

    test('GIVEN a name the model does not follow, or no "=" THEN refused, listing the names it does', () => {
      expect(problemsOf(() => parseEngineArg('enable-chunked-prefill=true'))[0]).toBe(
        `--engine-arg: unknown engine argument "enable-chunked-prefill": the engine model follows ${ENGINE_ARGS.map((s) => s.flag).join(', ')}`,
      );
      expect(problemsOf(() => parseEngineArg('max-num-seqs'))[0]).toMatch(/must be NAME=VALUE/);
      expect(problemsOf(() => parseEngineArg('max-num-seqs=0x10'))[0]).toMatch(/integer between 1 and/);
    });

    test('GIVEN the same name twice and a bad one THEN every problem is listed at once', () => {
      expect(problemsOf(() => parseEngineArgs(['max-num-seqs=8', 'max-num-seqs=9', 'nope=1']))).toHaveLength(2);
    });
  });

  describe('when given to simulate, plan, emulate and demo', () => {
    const args = ['--engine-arg', 'long-prefill-token-threshold=512', '--engine-arg', 'scheduling-policy=priority'];

    test('GIVEN simulate with a mixed fleet THEN every instance runs with the arguments over its own profile', () => {
      const flags = parseSimulateFlags(
        parsed(registerSimulate, 'simulate', ['--instances', '2:p5-llama-3.1-70b,1:p4d-llama-3.1-70b', ...args]),
      );
      expect(flags.fleet.map((p) => [p.name, p.longPrefillTokenThreshold, p.schedulingPolicy])).toEqual([
        ['p5-llama-3.1-70b', 512, 'priority'],
        ['p5-llama-3.1-70b', 512, 'priority'],
        ['p4d-llama-3.1-70b', 512, 'priority'],
      ]);
      expect(flags.profile.longPrefillTokenThreshold).toBe(512);
    });

    test('GIVEN plan THEN its profile carries them', () => {
      const flags = parsePlanFlags({ ...parsed(registerPlan, 'plan', ['--slo', 'p90-ttft<=2s', ...args]) });
      expect(flags.profile).toMatchObject({ longPrefillTokenThreshold: 512, schedulingPolicy: 'priority' });
    });

    test('GIVEN emulate THEN every engine of the fleet carries them', () => {
      const flags = parseEmulateFlags(
        parsed(registerEmulate, 'emulate', [
          '--instances',
          '2',
          '--profile',
          'tiny',
          '--engine-arg',
          'max-num-seqs=4',
        ]) as Record<string, string>,
      );
      expect(flags.fleet.map((p) => p.maxNumSeqs)).toEqual([4, 4]);
    });

    test('GIVEN demo THEN its options carry them for the emulated engines', () => {
      expect(parseDemoFlags(parsed(registerDemo, 'demo', args)).engineArgs).toEqual({
        'long-prefill-token-threshold': 512,
        'scheduling-policy': 'priority',
      });
    });

    test('GIVEN a budget below the sequence limit or a threshold above the context THEN refused as vLLM refuses it', () => {
      expect(
        problemsOf(() =>
          parseSimulateFlags(parsed(registerSimulate, 'simulate', ['--engine-arg', 'max-num-batched-tokens=512'])),
        ),
      ).toEqual(['--engine-arg max-num-batched-tokens (512) must be at least max-num-seqs (1024)']);
      expect(
        problemsOf(() =>
          parseEmulateFlags(
            parsed(registerEmulate, 'emulate', [
              '--profile',
              'tiny',
              '--engine-arg',
              'long-prefill-token-threshold=2048',
            ]) as Record<string, string>,
          ),
        ),
      ).toEqual(['--engine-arg long-prefill-token-threshold (2048) must be at most max-model-len (1024)']);
    });

    test('GIVEN no --engine-arg THEN the profiles are the built-in ones, unchanged', () => {
      const flags = parseSimulateFlags(parsed(registerSimulate, 'simulate', []));
      expect(flags.profile).not.toHaveProperty('longPrefillTokenThreshold');
      expect(flags.profile.maxNumBatchedTokens).toBe(8192);
    });
  });
});
