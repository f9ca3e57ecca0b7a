import { join } from 'node:path';
import {
  describeWorkloadOptions,
  parseWorkloadSpec,
  WorkloadSpecError,
  WORKLOAD_KINDS,
} from '../../../router/src/workload';

const EXCERPT = join(__dirname, 'fixtures', 'mooncake-excerpt.jsonl');

function problemsOf(spec: string): readonly string[] {
  try {
    parseWorkloadSpec(spec);
  } catch (error) {
    if (error instanceof WorkloadSpecError) return error.problems;
    throw error;
  }
  throw new Error(`expected '${spec}' to be refused`);
}

function firstIds(spec: string, n: number): string[] {
  const out: string[] = [];
  for (const r of parseWorkloadSpec(spec).requests()) {
    out.push(
      `${r.id}@${r.arrivalMs.toFixed(3)}:${r.kind === 'chat' ? r.messages.map((m) => m.content.length).join('+') : r.prompt.length}`,
    );
    if (out.length === n) break;
  }
  return out;
}

describe('when parsing a workload spec', () => {
  test.each(['long-context', 'short-chat', 'shared-system'])(
    'GIVEN %s without options THEN the defaults apply and the canonical spec lists them',
    (kind) => {
      const workload = parseWorkloadSpec(kind);
      expect(workload.kind).toBe(kind);
      expect(workload.spec.startsWith(`${kind}?`)).toBe(true);
      expect(workload.spec).toContain('seed=1');
    },
  );

  test('GIVEN options WHEN parsed THEN they reach the workload and its parameters', () => {
    const workload = parseWorkloadSpec(
      'long-context?groups=600&rate=6.5&suffixTokens=100..200&popularity=zipf&count=5',
    );
    expect(workload.parameters).toMatchObject({
      groups: 600,
      rate: 6.5,
      suffixTokens: '100..200',
      popularity: 'zipf',
      count: 5,
    });
    expect(workload.load).toEqual({ mode: 'open-poisson', ratePerSecond: 6.5 });
    expect(Array.from(workload.requests())).toHaveLength(5);
  });

  test('GIVEN concurrency WHEN parsed THEN the load is closed loop', () => {
    expect(parseWorkloadSpec('short-chat?concurrency=32').load).toEqual({ mode: 'closed', concurrency: 32 });
  });

  test.each([
    'long-context?groups=50&count=4&seed=9',
    'short-chat?count=6&turns=3..4',
    'shared-system?groups=3&promptsPerGroup=2',
    `trace:${EXCERPT}?count=3&speedup=2`,
  ])('GIVEN %s WHEN its canonical spec is parsed again THEN the same requests come out', (spec) => {
    const workload = parseWorkloadSpec(spec);
    expect(parseWorkloadSpec(workload.spec).spec).toBe(workload.spec);
    expect(firstIds(workload.spec, 6)).toEqual(firstIds(spec, 6));
  });

  describe('GIVEN the groups option (allowed 1..1000000)', () => {
    test.each([
      ['0', false],
      ['1', true],
      ['1000000', true],
      ['1000001', false],
    ])('WHEN groups=%s THEN accepted is %s', (value, accepted) => {
      const spec = `long-context?groups=${value}&count=1`;
      if (accepted) expect(parseWorkloadSpec(spec).parameters.groups).toBe(Number(value));
      else expect(problemsOf(spec)).toEqual([`groups must be an integer between 1 and 1000000 (got '${value}')`]);
    });
  });

  describe('GIVEN the rate option (greater than 0)', () => {
    test('WHEN rate=0 THEN it is refused naming the range', () => {
      expect(problemsOf('long-context?rate=0')).toEqual([
        "rate must be a number greater than 0 and at most 100000 (got '0')",
      ]);
    });
    test('WHEN rate=0.001 THEN it is accepted', () => {
      expect(parseWorkloadSpec('long-context?rate=0.001').load).toEqual({ mode: 'open-poisson', ratePerSecond: 0.001 });
    });
  });

  test('GIVEN several bad options WHEN parsed THEN every problem is reported at once', () => {
    const problems = problemsOf('long-context?groups=abc&popularity=pareto&suffixTokens=9..3&bogus=1');
    expect(problems).toEqual([
      expect.stringMatching(/^unknown option 'bogus' \(allowed: groups, prefixTokens, /),
      "groups must be an integer between 1 and 1000000 (got 'abc')",
      "suffixTokens must be an integer or range min..max within 1..1000000 (got '9..3')",
      "popularity must be one of uniform, zipf (got 'pareto')",
    ]);
  });

  test('GIVEN a malformed or repeated option THEN it is refused', () => {
    expect(problemsOf('long-context?groups')).toEqual(["option 'groups' must be written name=value"]);
    expect(problemsOf('long-context?groups=1&groups=2')).toEqual(["option 'groups' is given twice"]);
    expect(problemsOf('long-context?toString=1')[0]).toMatch(/^unknown option 'toString'/);
  });

  test('GIVEN an unknown workload or a trace without path THEN the error says what is expected', () => {
    expect(problemsOf('huge-context')[0]).toMatch(
      /unknown workload 'huge-context': expected 'long-context', 'short-chat', 'shared-system' or 'trace:PATH'/,
    );
    expect(problemsOf('trace:')).toEqual(['trace needs a file path: trace:PATH']);
  });

  test('GIVEN a short-chat whose first turn cannot fit the context THEN it is refused with the sum it needs', () => {
    expect(problemsOf('short-chat?maxContextTokens=500')[0]).toBe(
      'maxContextTokens must be at least systemTokens.max + userTokens.max + outputTokens.max = 1100 so every first turn fits (got 500)',
    );
  });

  test('GIVEN every workload kind THEN its options can be listed for --help', () => {
    for (const kind of WORKLOAD_KINDS) expect(describeWorkloadOptions(kind)).toMatch(/default/);
    expect(describeWorkloadOptions('long-context')).toContain(
      'groups — distinct shared prefixes; an integer between 1 and 1000000; default 550',
    );
  });
});
