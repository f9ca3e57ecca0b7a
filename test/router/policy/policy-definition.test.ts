import { SeededRng } from '../../../router/src/common/seeded-rng';
import { definePolicy, RoundRobinPolicy } from '../../../router/src/policy';

/**
 * `create()` receives options typed from the definition's own schema. The `@ts-expect-error` lines are the
 * spec: `npm test` type-checks the tests first (tsc), and an expected error that does not occur fails it, so a
 * schema typing that let a misspelt option or a wrongly typed value through would fail the build.
 */
describe('when a policy definition builds its policy', () => {
  const seen: unknown[] = [];
  const toy = definePolicy({
    name: 'toy',
    description: 'a toy policy for the option types',
    reasons: ['toy'],
    stages: [{ kind: 'picker', name: 'round-robin' }],
    options: [
      { name: 'width', type: 'integer', min: 1, max: 8, default: 2, doc: 'a numeric option' },
      {
        name: 'label',
        type: 'string',
        pattern: /^[a-z]+$/,
        patternDoc: 'lower-case letters',
        default: 'x',
        doc: 'a string option',
      },
    ],
    create: (options) => {
      const width: number = options.width;
      const label: string = options.label;
      // @ts-expect-error a misspelt option does not compile
      seen.push(options.widht);
      // @ts-expect-error a string option is not a number
      const wrong: number = options.label;
      seen.push(width, label, wrong);
      return new RoundRobinPolicy();
    },
  });

  it('GIVEN values for every option of its schema THEN create gets them under the schema names', () => {
    // GIVEN the options, defaults filled in, as createPolicy passes them
    toy.create({ width: 3, label: 'abc' }, { rng: new SeededRng(1) });
    // THEN the misspelt name read nothing, the real names read the values
    expect(seen).toEqual([undefined, 3, 'abc', 'abc']);
  });

  it('GIVEN the values of another schema THEN they do not type-check as this one', () => {
    // @ts-expect-error an option the schema does not declare
    const call = () => toy.create({ width: 3, label: 'abc', height: 4 }, { rng: new SeededRng(1) });
    expect(call).not.toThrow();
    // @ts-expect-error a required option missing
    expect(() => toy.create({ width: 3 }, { rng: new SeededRng(1) })).not.toThrow();
  });
});
