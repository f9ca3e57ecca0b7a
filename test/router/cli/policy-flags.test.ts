import { ConfigError } from '../../../router/src/common/config-error';
import { parseDemoFlags } from '../../../router/src/cli/demo-command';
import { policyFlagSpecs } from '../../../router/src/cli/flag-values';
import { parsePlanFlags } from '../../../router/src/cli/plan-command';
import { parseSimulateFlags } from '../../../router/src/cli/simulate-command';

const HINT = 'repeat --policy for each policy (--policy random --policy cache-aware)';

describe('when --policy is given a comma list', () => {
  test.each([
    ['simulate', () => parseSimulateFlags({ policy: ['random,cache-aware'] })],
    ['demo', () => parseDemoFlags({ policy: ['random,cache-aware'] })],
    ['plan', () => parsePlanFlags({ slo: ['p90-ttft<=1s'], policy: ['random,cache-aware'] })],
  ])(
    'GIVEN %s --policy random,cache-aware WHEN parsed THEN the ConfigError says to repeat --policy, with the names given',
    (_command, parse) => {
      expect(parse).toThrow(ConfigError);
      expect(parse).toThrow(`--policy takes one policy per flag (got "random,cache-aware"): ${HINT}`);
    },
  );

  test('GIVEN two comma lists THEN both are listed in one error', () => {
    expect(() => policyFlagSpecs(['random,cache-aware', 'sagemaker-prefix-aware, least-outstanding-requests'])).toThrow(
      /random,cache-aware[\s\S]*--policy sagemaker-prefix-aware --policy least-outstanding-requests/,
    );
  });

  test('GIVEN a trailing comma (random,) THEN the hint names the one policy', () => {
    expect(() => policyFlagSpecs(['random,'])).toThrow('repeat --policy for each policy (--policy random)');
  });

  test('GIVEN a comma only after ? (an option value) THEN it is left to the policy parser', () => {
    expect(policyFlagSpecs(['sagemaker-prefix-aware?prefixLength=1024,4096'])).toEqual([
      'sagemaker-prefix-aware?prefixLength=1024,4096',
    ]);
    expect(() => parseSimulateFlags({ policy: ['sagemaker-prefix-aware?prefixLength=1024,4096'] })).not.toThrow(
      /repeat --policy/,
    );
  });

  test('GIVEN repeated --policy flags THEN they are taken as given', () => {
    expect(parseSimulateFlags({ policy: ['random', 'cache-aware'] }).policies.map((p) => p.name)).toEqual([
      'random',
      'cache-aware',
    ]);
  });

  test('GIVEN no --policy THEN there are no specs (the command keeps its defaults)', () => {
    expect(policyFlagSpecs(undefined)).toBeUndefined();
  });
});
