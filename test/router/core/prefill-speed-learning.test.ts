import { RoutingCore, type RoutingTarget } from '../../../router/src/core/routing-core';
import { NoHealthyInstanceError, type RoutingPolicy } from '../../../router/src/policy';
import { PrefillSpeedEstimator } from '../../../router/src/policy/prefill-speed';
import { InstanceLoad } from '../../../router/src/state/instance-load';
import { chatRequest } from '../policy/policy-test-helpers';

interface Instance extends RoutingTarget {
  readonly id: string;
}

/** Always chooses `choice`, predicting nothing cached. */
function to(choice: string): RoutingPolicy {
  return {
    name: 'scripted',
    decide: (_r, snapshot) => {
      if (!snapshot.instances.some((v) => v.healthy)) throw new NoHealthyInstanceError();
      return { instance: choice, reason: 'scripted' };
    },
    commit: () => undefined,
    release: () => undefined,
  };
}

const options = { priorTokensPerSecond: 20_000, priorSamples: 0, smoothing: 0.05, minSampleTokens: 1024 };
// 16,000 characters = 4,000 estimated prompt tokens.
const prompt = chatRequest('p'.repeat(16_000));

function setup(choice = 'a') {
  const instances = new Map<string, Instance>([['a', { id: 'a', load: new InstanceLoad() }]]);
  const speeds = new PrefillSpeedEstimator(options);
  const core = new RoutingCore<Instance>(to(choice), (id) => instances.get(id), {}, { prefillSpeeds: speeds });
  const snapshot = (nowMs: number) => ({
    instances: [{ id: 'a', healthy: true, inFlight: instances.get('a')!.load.inFlight }],
    nowMs,
  });
  return { instance: instances.get('a')!, speeds, core, snapshot };
}

describe('when the routing core learns prefill speeds', () => {
  test('GIVEN a first token 500 ms after the decision THEN the instance is sampled at its prompt over 500 ms, and its target shows the estimate', () => {
    const { instance, speeds, core, snapshot } = setup();
    const routed = core.begin(prompt);
    routed.decide(snapshot(1000));
    const own = routed.attempt!.ticket.prefillTokens;
    routed.firstToken(1500);
    expect(speeds.samples('a')).toBe(1);
    expect(instance.prefillTokensPerSecond).toBeCloseTo(own / 0.5, 6);
    routed.end({ kind: 'completed' });
  });

  test('GIVEN prefill queued on the instance at the decision THEN the sample counts it as work ahead of the request', () => {
    const { instance, core, snapshot } = setup();
    const first = core.begin(prompt);
    first.decide(snapshot(0));
    const second = core.begin(prompt);
    second.decide(snapshot(0));
    const each = second.attempt!.ticket.prefillTokens;
    expect(second.attempt!.queuedAheadTokens).toBe(each);
    // The second request's first token after both prefills: 2 × its tokens in 1 s.
    second.firstToken(1000);
    expect(instance.prefillTokensPerSecond).toBeCloseTo(2 * each, 6);
    first.end();
    second.end();
  });

  test('GIVEN the first token reported twice, or without a time THEN only one sample is taken, and none without a time', () => {
    const { speeds, core, snapshot } = setup();
    const routed = core.begin(prompt);
    routed.decide(snapshot(0));
    routed.firstToken(400);
    routed.firstToken(900);
    expect(speeds.samples('a')).toBe(1);
    const untimed = core.begin(prompt);
    untimed.decide(snapshot(0));
    untimed.firstToken();
    expect(speeds.samples('a')).toBe(1);
    routed.end();
    untimed.end();
  });

  test('GIVEN a core without an estimator THEN firstToken(nowMs) learns nothing', () => {
    const instances = new Map<string, Instance>([['a', { id: 'a', load: new InstanceLoad() }]]);
    const core = new RoutingCore<Instance>(to('a'), (id) => instances.get(id));
    const routed = core.begin(prompt);
    routed.decide({ instances: [{ id: 'a', healthy: true, inFlight: 0 }], nowMs: 0 });
    routed.firstToken(500);
    expect(instances.get('a')!.prefillTokensPerSecond).toBeUndefined();
    routed.end();
  });
});
