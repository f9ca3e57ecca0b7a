import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fleetFlag } from '../../../router/src/cli/flag-values';
import { ConfigError } from '../../../router/src/common/config-error';
import { BUILTIN_PROFILE_NAMES, builtinProfile, fleetText } from '../../../router/src/emulator/engine-profile';
import { parseSimulateFlags } from '../../../router/src/cli/simulate-command';

const RANGE = { min: 1, max: 1024 } as const;
const p5 = builtinProfile('p5-llama-3.1-70b');
const fleet = (raw: string) => fleetFlag('instances', raw, RANGE, () => p5);
const problemOf = (raw: string): string => {
  try {
    fleet(raw);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.join('\n');
    throw err;
  }
  throw new Error(`accepted ${raw}`);
};

describe('when --instances is a count', () => {
  test('GIVEN 7 THEN seven instances of the default profile', () => {
    const f = fleet('7');
    expect(f).toHaveLength(7);
    expect(new Set(f)).toEqual(new Set([p5]));
  });

  test.each([
    ['0', 'the minimum minus one'],
    ['1025', 'the maximum plus one'],
    ['0x10', 'hexadecimal'],
    ['1e3', 'an exponent'],
    ['', 'empty'],
    ['-1', 'negative'],
  ])('GIVEN %j (%s) THEN it is refused naming the flag, the form and the value', (raw) => {
    const problem = problemOf(raw);
    expect(problem).toContain('--instances must be N or COUNT:PROFILE groups');
    expect(problem).toContain(JSON.stringify(raw));
  });

  test.each(['1', '1024'])('GIVEN %s (a boundary) THEN it is accepted', (raw) => {
    expect(fleet(raw)).toHaveLength(Number(raw));
  });
});

describe('when --instances is a mixed fleet', () => {
  test('GIVEN 5:p5-llama-3.1-70b,2:p4d-llama-3.1-70b THEN five p5 then two p4d, in that order', () => {
    const f = fleet('5:p5-llama-3.1-70b,2:p4d-llama-3.1-70b');
    expect(f.map((p) => p.name)).toEqual([
      ...Array(5).fill('p5-llama-3.1-70b'),
      'p4d-llama-3.1-70b',
      'p4d-llama-3.1-70b',
    ]);
    expect(fleetText(f)).toBe('5 × p5-llama-3.1-70b + 2 × p4d-llama-3.1-70b');
  });

  test('GIVEN a group without a profile THEN it takes the default (--profile)', () => {
    expect(fleet('5,2:p4d-llama-3.1-70b').map((p) => p.name)).toEqual([
      ...Array(5).fill('p5-llama-3.1-70b'),
      'p4d-llama-3.1-70b',
      'p4d-llama-3.1-70b',
    ]);
  });

  test('GIVEN an unknown profile THEN the profile error names the flag and the known profiles', () => {
    expect(problemOf('5:p5-llama-3.1-70b,2:p9')).toMatch(
      /^--instances: unknown profile "p9": expected one of p5-llama-3.1-70b, /,
    );
  });

  test.each([
    '5:',
    '5:p5-llama-3.1-70b,',
    ':p5-llama-3.1-70b',
    '0:p5-llama-3.1-70b,2:p4d-llama-3.1-70b',
    '1000:p5-llama-3.1-70b,25:p4d-llama-3.1-70b',
  ])('GIVEN %j THEN it is refused with the form', (raw) => {
    expect(problemOf(raw)).toContain('--instances must be N or COUNT:PROFILE groups');
  });

  test('GIVEN profiles with different KV block sizes THEN it is refused: prompts are hashed once for the fleet', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fleet-flag-')), 'blocks-32.json');
    writeFileSync(
      file,
      JSON.stringify({ ...p5, name: 'blocks-32', blockTokens: 32, kvCapacityBlocks: p5.kvCapacityBlocks / 2 }),
    );
    expect(problemOf(`1:p5-llama-3.1-70b,1:${file}`)).toMatch(
      /^--instances: every profile must have the same blockTokens \(got p5-llama-3.1-70b 16, blocks-32 32\)/,
    );
  });

  test('GIVEN any groups of built-in profiles THEN the fleet is the groups expanded in order (property)', () => {
    const sameBlocks = BUILTIN_PROFILE_NAMES.filter((n) => builtinProfile(n).blockTokens === p5.blockTokens);
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            count: fc.integer({ min: 1, max: 40 }),
            name: fc.option(fc.constantFrom(...sameBlocks), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        (groups) => {
          const raw = groups.map((g) => (g.name === undefined ? String(g.count) : `${g.count}:${g.name}`)).join(',');
          const expected = groups.flatMap((g) => Array<string>(g.count).fill(g.name ?? p5.name));
          expect(fleet(raw).map((p) => p.name)).toEqual(expected);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('when simulate is given a mixed fleet', () => {
  test('GIVEN --instances 5:p5-llama-3.1-70b,2:p4d-llama-3.1-70b THEN the flags carry seven instances and their profiles', () => {
    const flags = parseSimulateFlags({ instances: '5:p5-llama-3.1-70b,2:p4d-llama-3.1-70b' });
    expect(flags.instances).toBe(7);
    expect(fleetText(flags.fleet)).toBe('5 × p5-llama-3.1-70b + 2 × p4d-llama-3.1-70b');
    expect(flags.profile.name).toBe('p5-llama-3.1-70b');
  });
});
