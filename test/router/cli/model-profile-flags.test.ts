import { parseDemoFlags } from '../../../router/src/cli/demo-command';
import { parseEmulateFlags } from '../../../router/src/cli/emulate-command';
import { parsePlanFlags } from '../../../router/src/cli/plan-command';
import { parseSimulateFlags } from '../../../router/src/cli/simulate-command';

const QWEN = 'Qwen/Qwen2.5-7B-Instruct';
const G6E = 'ml.g6e.2xlarge';
/** plan's flags with the SLO it requires. */
const plan = (flags: Record<string, unknown>) => parsePlanFlags({ slo: ['p90-ttft<=2s'], ...flags });

describe('when plan is given a model and an instance type', () => {
  test('GIVEN --model and --instance-type THEN the profile is derived for that pair and priced as that type', () => {
    const flags = plan({ model: QWEN, instanceType: G6E });
    expect(flags.profile.name).toBe(`derived:${QWEN}@${G6E}`);
    expect(flags.instanceType).toBe(G6E);
    expect(flags.price.usdPerInstanceHour).toBe(2.6);
    expect(flags.derived?.tensorParallelSize).toBe(1);
  });

  test('GIVEN only --instance-type for a type no profile describes THEN it is refused with the command that works', () => {
    expect(() => plan({ instanceType: G6E })).toThrow(
      `--instance-type ${G6E}: no profile describes it (the default p5-llama-3.1-70b is ml.p5.48xlarge); name the model it serves: prefix-router plan --model ${QWEN} --instance-type ${G6E} …`,
    );
  });

  test('GIVEN a shipped profile for another instance type THEN it is refused, never priced as another machine', () => {
    expect(() => plan({ profile: 'p5-llama-3.1-70b', instanceType: G6E })).toThrow(
      `--profile p5-llama-3.1-70b describes ml.p5.48xlarge, not --instance-type ${G6E}`,
    );
    expect(
      plan({ profile: 'p5e-llama-3.1-70b', instanceType: 'ml.p5en.48xlarge', pricePerInstanceHour: '90' }).profile.name,
    ).toBe('p5e-llama-3.1-70b');
  });

  test('GIVEN --profile with --model THEN the explicit profile wins', () => {
    expect(plan({ profile: 'p5-llama-3.1-70b', model: QWEN }).profile.name).toBe('p5-llama-3.1-70b');
  });

  test('GIVEN a model that does not fit THEN it is refused naming why and the smallest types that fit', () => {
    expect(() => plan({ model: 'meta-llama/Llama-3.1-70B-Instruct', instanceType: G6E })).toThrow(
      /cannot run on ml\.g6e\.2xlarge: its weights .* do not fit.*the smallest types it fits: /,
    );
  });

  test('GIVEN --model without --instance-type THEN the error names the flag it needs', () => {
    expect(() => plan({ model: QWEN })).toThrow('--model needs --instance-type');
    expect(() => plan({ modelConfig: 'config.json' })).toThrow('--model-config needs --instance-type');
  });
});

describe('when simulate, emulate and demo are given a model and an instance type', () => {
  test('GIVEN simulate THEN every instance runs the derived profile', () => {
    const flags = parseSimulateFlags({ model: QWEN, instanceType: G6E, instances: '3' });
    expect(flags.fleet.map((p) => p.name)).toEqual(Array(3).fill(`derived:${QWEN}@${G6E}`));
  });

  test("GIVEN emulate's --model alone THEN it stays the served name; with --instance-type it derives", () => {
    const served = parseEmulateFlags({ model: 'my-model' });
    expect(served.model).toBe('my-model');
    expect(served.fleet[0].name).toBe('p5-llama-3.1-70b');
    const derived = parseEmulateFlags({ model: QWEN, instanceType: G6E, instances: '2' });
    expect(derived.fleet.map((p) => p.name)).toEqual(Array(2).fill(`derived:${QWEN}@${G6E}`));
    expect(derived.fleet[0].modelName).toBe(QWEN);
  });

  test('GIVEN demo THEN the fleet carries the derived profile', () => {
    const options = parseDemoFlags({ model: QWEN, instanceType: G6E, instances: '2' });
    expect(options.profiles?.map((p) => (typeof p === 'string' ? p : p.name))).toEqual(
      Array(2).fill(`derived:${QWEN}@${G6E}`),
    );
  });
});
