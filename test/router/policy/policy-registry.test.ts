import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { CLI_OPTIONS, loadRouterConfig, loadRouterOptions } from '../../../router/src/config';
import {
  createPolicy,
  expandPolicySweep,
  formatPolicySpec,
  NoHealthyInstanceError,
  parsePolicySpec,
  POLICY_DEFINITIONS,
  PolicyConfigError,
  policyConfigProblems,
  type InstanceView,
  type PolicyConfig,
  type PolicyDefinition,
  type ReleaseOutcome,
} from '../../../router/src/policy';
import { withGeneratedSections } from '../../../router/bench/policy-docs';
import { estimatedPromptTokens } from '../../../router/src/policy/prompt-tokens';
import { InstanceLoad } from '../../../router/src/state/instance-load';
import { chatRequest } from './policy-test-helpers';

/**
 * Properties every registered policy must have, derived from the registry: a new policy file gets these tests,
 * its flags, variables, spec strings and docs rows without touching this file.
 */
const definitions = POLICY_DEFINITIONS as readonly PolicyDefinition[];
const names = definitions.map((d) => d.name);
const numeric = definitions.flatMap((d) =>
  d.options.filter((o) => o.type !== 'string').map((o) => [d.name, o] as const),
);

const viewArb = fc.record({
  healthy: fc.boolean(),
  inFlight: fc.integer({ min: 0, max: 40 }),
  queuedPrefillTokens: fc.integer({ min: 0, max: 200_000 }),
  decodeSequences: fc.integer({ min: 0, max: 40 }),
});
const textArb = fc.string({ minLength: 0, maxLength: 3000 });

function views(
  specs: ReadonlyArray<{ healthy: boolean; inFlight: number; queuedPrefillTokens: number; decodeSequences: number }>,
): InstanceView[] {
  return specs.map((s, i) => ({ id: `http://10.0.0.${i + 1}:8000`, ...s, engine: engineStateLike(s) }));
}

/**
 * What a simulated engine would report (InstanceView.engine, read by oracle and llm-d-precise, ignored by the
 * others): nothing cached, the router's own counts of queued prefill and decodes.
 */
function engineStateLike(s: { queuedPrefillTokens: number; decodeSequences: number }): InstanceView['engine'] {
  const queue = {
    prefillTokensAhead: s.queuedPrefillTokens,
    pendingPromptTokens: 0,
    stepInProgressTokens: 0,
    kvWaitTokens: 0,
    decodeSequences: s.decodeSequences,
    prefillingSequences: 0,
    stepTokens: 8192,
  };
  return { cachedPromptTokens: 0, queue };
}

describe.each(names)('when policy %s is used through the registry', (name) => {
  const definition = definitions.find((d) => d.name === name)!;

  it('GIVEN any instances with at least one healthy THEN it chooses a healthy one and names a reason of its definition', () => {
    fc.assert(
      fc.property(
        fc.array(viewArb, { minLength: 1, maxLength: 9 }),
        fc.array(textArb, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        (specs, texts, seed) => {
          fc.pre(specs.some((s) => s.healthy));
          const vs = views(specs);
          const p = createPolicy({ name } as PolicyConfig, { rng: new SeededRng(seed) });
          for (const text of texts) {
            const r = chatRequest(text);
            const d = p.decide(r, { instances: vs, nowMs: 0 });
            expect(vs.find((v) => v.id === d.instance)?.healthy).toBe(true);
            expect(definition.reasons).toContain(d.reason);
            p.commit(r, d);
            p.release(r, d, { kind: 'completed' });
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('GIVEN its defaults THEN the policy it creates runs exactly the stages its definition lists', () => {
    const p = createPolicy({ name } as PolicyConfig, { rng: new SeededRng(1) });
    expect(p.stages).toEqual(definition.stages);
    expect(p.engineState).toBe(definition.engineState);
    expect(definition.stages.slice(0, 2).map((s) => s.name)).toEqual(['serves-model', 'healthy']);
  });

  it('GIVEN any frozen snapshot of instances serving any models THEN deciding changes neither the snapshot nor an instance', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(viewArb, fc.subarray(['m', 'sql'])), { minLength: 1, maxLength: 7 }),
        fc.array(fc.tuple(textArb, fc.constantFrom('m', 'sql')), { minLength: 1, maxLength: 6 }),
        (specs, requests) => {
          const vs = views(specs.map(([s]) => s)).map((v, i) =>
            Object.freeze({ ...v, servedModels: new Set(specs[i][1]) }),
          );
          const snapshot = Object.freeze({ instances: Object.freeze(vs), nowMs: 0 });
          const before = JSON.stringify(vs.map((v) => ({ ...v, servedModels: [...v.servedModels] })));
          const p = createPolicy({ name } as PolicyConfig, { rng: new SeededRng(2) });
          for (const [text, model] of requests) {
            const r = { ...chatRequest(text), model };
            const eligible = vs.filter((v) => v.healthy && v.servedModels.has(model));
            if (eligible.length === 0) {
              expect(() => p.decide(r, snapshot)).toThrow(NoHealthyInstanceError);
              continue;
            }
            const d = p.decide(r, snapshot);
            expect(eligible.map((v) => v.id)).toContain(d.instance);
            p.commit(r, d);
          }
          expect(JSON.stringify(vs.map((v) => ({ ...v, servedModels: [...v.servedModels] })))).toBe(before);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('GIVEN no healthy instance THEN it throws NoHealthyInstanceError', () => {
    const p = createPolicy({ name } as PolicyConfig, { rng: new SeededRng(1) });
    expect(() =>
      p.decide(chatRequest('x'), { instances: [{ id: 'a', healthy: false, inFlight: 0 }], nowMs: 0 }),
    ).toThrow(NoHealthyInstanceError);
  });

  it('GIVEN the same seed and the same requests THEN two instances of the policy decide the same (replicas agree)', () => {
    fc.assert(
      fc.property(
        fc.array(viewArb, { minLength: 1, maxLength: 7 }),
        fc.array(textArb, { minLength: 1, maxLength: 8 }),
        fc.nat(),
        (specs, texts, seed) => {
          fc.pre(specs.some((s) => s.healthy));
          const vs = views(specs);
          const run = () => {
            const p = createPolicy({ name } as PolicyConfig, { rng: new SeededRng(seed) });
            return texts.map((t) => {
              const r = chatRequest(t);
              const d = p.decide(r, { instances: vs, nowMs: 0 });
              p.commit(r, d);
              return d.instance;
            });
          };
          expect(run()).toEqual(run());
        },
      ),
      { numRuns: 40 },
    );
  });

  it('GIVEN requests that end in any outcome, in any order THEN the load bookkeeping returns to zero', () => {
    const outcomes: ReleaseOutcome[] = [
      { kind: 'completed', cachedTokens: 0 },
      { kind: 'completed' },
      { kind: 'failed' },
      { kind: 'aborted' },
    ];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            text: textArb,
            outcome: fc.constantFrom(...outcomes),
            firstToken: fc.boolean(),
            endAt: fc.nat(),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        (requests) => {
          const ids = ['a', 'b', 'c'];
          const loads = ids.map(() => new InstanceLoad());
          const p = createPolicy({ name } as PolicyConfig, { rng: new SeededRng(3) });
          const open: Array<{ end: () => void; firstToken: () => void; firstTokenToo: boolean }> = [];
          for (const spec of requests) {
            const vs: InstanceView[] = ids.map((id, i) => ({
              id,
              healthy: true,
              inFlight: loads[i].inFlight,
              queuedPrefillTokens: loads[i].queuedPrefillTokens,
              decodeSequences: loads[i].decodeSequences,
              engine: engineStateLike(loads[i]),
            }));
            const r = chatRequest(spec.text);
            const d = p.decide(r, { instances: vs, nowMs: 0 });
            p.commit(r, d);
            const ticket = loads[ids.indexOf(d.instance)].start(
              estimatedPromptTokens(r) - (d.predictedCachedTokens ?? 0),
            );
            open.splice(spec.endAt % (open.length + 1), 0, {
              firstTokenToo: spec.firstToken,
              firstToken: () => ticket.firstToken(),
              end: () => {
                ticket.end();
                ticket.end(); // idempotent: a second exit path changes nothing
                p.release(r, d, spec.outcome);
              },
            });
          }
          for (const o of open) if (o.firstTokenToo) o.firstToken();
          for (const o of open) o.end();
          for (const load of loads)
            expect([load.inFlight, load.queuedPrefillTokens, load.decodeSequences]).toEqual([0, 0, 0]);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('GIVEN its defaults THEN the spec string round-trips and every option has a flag and a variable', () => {
    const config = { name, ...Object.fromEntries(definition.options.map((o) => [o.name, o.default])) } as PolicyConfig;
    expect(parsePolicySpec(formatPolicySpec(config))).toEqual(config);
    for (const o of definition.options) {
      const spec = CLI_OPTIONS.find((c) => c.path === `policy.${o.name}`);
      expect(spec).toBeDefined();
      expect(spec!.description).toContain(name);
    }
  });
});

describe.each(numeric.map(([policy, option]) => [`${policy} ${option.name}`, policy, option] as const))(
  'when option %s is validated',
  (_label, policy, option) => {
    const o = option;
    const step = o.type === 'integer' ? 1 : 0.5;
    it.each([
      ['min − 1', o.min - step, false],
      ['min', o.min, true],
      ['max', o.max, true],
      ['max + 1', o.max + step, false],
    ])('GIVEN %s (%d) THEN it is %s', (_case, value, valid) => {
      const problems = policyConfigProblems({ name: policy, [o.name]: value });
      if (valid) expect(problems).toEqual([]);
      else
        expect(problems.map((p) => p.rule)).toEqual([
          `must be ${o.type === 'integer' ? 'an integer' : 'a number'} between ${o.min} and ${o.max}`,
        ]);
    });

    it('GIVEN a bad value in a spec string THEN the error names the flag, the policy, the option, the range and the value', () => {
      expect(() => parsePolicySpec(`${policy}?${o.name}=${o.max + step}`)).toThrow(
        new RegExp(
          `--policy ${policy} option ${o.name} must be .* between ${o.min} and ${o.max} \\(got ${o.max + step}\\)`,
        ),
      );
    });

    it('GIVEN the option in its PREFIX_ROUTER_ variable and the policy in PREFIX_ROUTER_POLICY THEN the router configuration carries it', () => {
      const spec = CLI_OPTIONS.find((c) => c.path === `policy.${o.name}`)!;
      const loaded = loadRouterOptions({ flags: {}, env: { PREFIX_ROUTER_POLICY: policy, [spec.env]: String(o.min) } });
      expect(loaded.options.policy).toMatchObject({ name: policy, [o.name]: o.min });
      expect(() =>
        loadRouterConfig({
          flags: {},
          env: {
            PREFIX_ROUTER_BACKENDS: 'http://127.0.0.1:1',
            PREFIX_ROUTER_POLICY: policy,
            [spec.env]: String(o.max + step),
          },
        }),
      ).toThrow(new RegExp(`${spec.env} must be`));
    });
  },
);

describe('when a policy is given as a spec string to serve or its variable', () => {
  it('GIVEN --policy with options THEN the policy and its options are configured, and a later option flag wins', () => {
    const loaded = loadRouterOptions({
      flags: { policy: 'cache-aware?blockChars=128&balanceSlackTokens=64', balanceSlackTokens: '32' },
      env: {},
    });
    expect(loaded.options.policy).toEqual({ name: 'cache-aware', blockChars: 128, balanceSlackTokens: 32 });
  });

  it('GIVEN PREFIX_ROUTER_POLICY with a bad option THEN the error names the variable and the option', () => {
    expect(() =>
      loadRouterConfig({
        flags: {},
        env: { PREFIX_ROUTER_BACKENDS: 'http://127.0.0.1:1', PREFIX_ROUTER_POLICY: 'cache-aware?blockChars=8' },
      }),
    ).toThrow(/PREFIX_ROUTER_POLICY option blockChars must be an integer between 16 and 65536 \(got 8\)/);
  });

  it('GIVEN an option of one policy only, alone THEN it selects that policy', () => {
    expect(loadRouterOptions({ flags: { blockChars: '128' }, env: {} }).options.policy).toEqual({
      name: 'cache-aware',
      blockChars: 128,
    });
    expect(loadRouterOptions({ flags: { prefixLength: '2048' }, env: {} }).options.policy).toEqual({
      name: 'sagemaker-prefix-aware',
      prefixLength: 2048,
    });
  });

  it('GIVEN a string option THEN its pattern is checked', () => {
    expect(() => parsePolicySpec('cache-aware?sessionHeader=Bad Header')).toThrow(PolicyConfigError);
    expect(parsePolicySpec('cache-aware?sessionHeader=x-conversation')).toEqual({
      name: 'cache-aware',
      sessionHeader: 'x-conversation',
    });
    expect(parsePolicySpec('cache-aware?sessionHeader=')).toEqual({ name: 'cache-aware', sessionHeader: '' });
  });
});

describe('when a sweep spec is expanded', () => {
  it('GIVEN two options with two values each THEN it gives their four combinations', () => {
    expect(
      expandPolicySweep('sagemaker-prefix-aware?prefixLength=1024,4096&concurrencyThreshold=8,32').map(
        formatPolicySpec,
      ),
    ).toEqual([
      'sagemaker-prefix-aware?prefixLength=1024&concurrencyThreshold=8',
      'sagemaker-prefix-aware?prefixLength=1024&concurrencyThreshold=32',
      'sagemaker-prefix-aware?prefixLength=4096&concurrencyThreshold=8',
      'sagemaker-prefix-aware?prefixLength=4096&concurrencyThreshold=32',
    ]);
  });

  it('GIVEN a value out of range THEN it is refused once, naming it', () => {
    expect(() => expandPolicySweep('sagemaker-prefix-aware?prefixLength=512,4096&concurrencyThreshold=8,32')).toThrow(
      /prefixLength must be an integer between 1024 and 65536 \(got 512\)/,
    );
  });
});

describe('when the docs list the policies', () => {
  it('GIVEN docs/router.md THEN its generated policy tables match the registry (npm run docs:policies rewrites them)', () => {
    const docs = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'router.md'), 'utf8');
    expect(withGeneratedSections(docs)).toBe(docs);
    for (const d of definitions) expect(docs).toContain(`| \`${d.name}\``);
  });

  it("GIVEN the README's table of components THEN the router's row names every registered policy", () => {
    const readme = readFileSync(join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith('| `prefix-router serve`'));
    expect(row).toBeDefined();
    for (const name of names) expect(row).toContain(`\`${name}\``);
  });

  it('GIVEN a stale copy of docs/router.md THEN npm run docs:policies rewrites its tables from the sources, with no build', () => {
    // GIVEN a copy whose policy table is out of date
    const docs = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'router.md'), 'utf8');
    const stale = docs.replace(
      /(<!-- generated:policies -->\n)[^]*?(\n<!-- \/generated:policies -->)/,
      '$1| stale |$2',
    );
    expect(stale).not.toBe(docs);
    const dir = mkdtempSync(join(tmpdir(), 'policy-docs-'));
    const file = join(dir, 'router.md');
    writeFileSync(file, stale);
    try {
      // WHEN the script the npm script runs is run on it, from the TypeScript sources
      const script = /"docs:policies": "ts-node --transpile-only ([^ "]+)"/.exec(
        readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8'),
      )?.[1];
      expect(script).toBe('router/bench/policy-docs.ts');
      const out = execFileSync(
        process.execPath,
        [require.resolve('ts-node/dist/bin.js'), '--transpile-only', script!, file],
        { cwd: join(__dirname, '..', '..', '..'), encoding: 'utf8' },
      );
      // THEN it says so, and the copy equals the real docs again
      expect(out).toContain('updated');
      expect(readFileSync(file, 'utf8')).toBe(docs);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
