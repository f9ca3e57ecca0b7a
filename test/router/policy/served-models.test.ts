import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { RoutingCore } from '../../../router/src/core/routing-core';
import {
  allHealthySameModels,
  createPolicy,
  NoHealthyInstanceError,
  POLICY_NAMES,
  requireServingInstance,
  UnknownModelError,
  type InstanceView,
} from '../../../router/src/policy';
import { routingBlockHashes } from '../../../router/src/policy/routing-blocks';
import type { RoutingRequest } from '../../../router/src/protocol/routing-request';
import { SERVES_MODEL_FILTER } from '../../../router/src/policy/stages/serves-model-filter';
import { InstanceLoad } from '../../../router/src/state/instance-load';
import { IDLE_ENGINE_QUEUE } from './policy-test-helpers';

/** A chat request for `model` (a base model or a LoRA adapter name). */
function requestFor(model: string, text: string): RoutingRequest {
  return { model, api: 'chat', keyBasis: 'message-text', routingText: text, stream: false };
}

function view(i: number, models: readonly string[] | undefined, extra: Partial<InstanceView> = {}): InstanceView {
  return {
    id: `http://10.0.0.${i + 1}:8000`,
    healthy: true,
    inFlight: 0,
    queuedPrefillTokens: 0,
    decodeSequences: 0,
    engine: { cachedPromptTokens: 0, queue: IDLE_ENGINE_QUEUE }, // what oracle and llm-d-precise read (the simulator fills it)
    ...(models ? { servedModels: new Set(models) } : {}),
    ...extra,
  };
}

const LONG = 'You are the SQL assistant of ACME; answer with one query. '.repeat(40);

describe('when the serves-model filter passes the instances serving the model a request names', () => {
  const passed = (instances: readonly InstanceView[], model: string) =>
    SERVES_MODEL_FILTER.filter(instances, { request: requestFor(model, LONG), snapshot: { instances, nowMs: 0 } });

  it('GIVEN every instance may serve it (lists unknown, or the model listed everywhere, or no model named) THEN the same array passes', () => {
    const unknown = [view(0, undefined), view(1, undefined)];
    expect(passed(unknown, 'sql')).toBe(unknown);
    const everywhere = [view(0, ['base', 'sql']), view(1, ['sql'])];
    expect(passed(everywhere, 'sql')).toBe(everywhere);
    expect(passed(everywhere, '')).toBe(everywhere);
  });

  it('GIVEN some instances do not serve it THEN only the others pass, as they are, and the input is unchanged', () => {
    const instances = [view(0, ['base'], { inFlight: 2 }), view(1, ['base', 'sql'])];
    const copy = [...instances];
    expect(passed(instances, 'sql')).toEqual([instances[1]]);
    expect(passed(instances, 'sql')[0]).toBe(instances[1]);
    expect(instances).toEqual(copy);
  });

  it('GIVEN no configured instance serves it THEN requireServingInstance throws UnknownModelError, with the message vLLM gives', () => {
    expect(() =>
      requireServingInstance(
        { instances: [view(0, ['base']), view(1, ['base', 'sql'], { healthy: false })], nowMs: 0 },
        'chat',
      ),
    ).toThrow(new UnknownModelError('chat'));
    expect(new UnknownModelError('chat').message).toBe('The model `chat` does not exist.');
  });

  it('GIVEN the only instance serving it is down THEN it is not unknown: the policy finds no healthy instance instead', () => {
    const snapshot = { instances: [view(0, ['base']), view(1, ['base', 'sql'], { healthy: false })], nowMs: 0 };
    expect(() => requireServingInstance(snapshot, 'sql')).not.toThrow();
    for (const name of POLICY_NAMES)
      expect(() => createPolicy({ name }, { rng: new SeededRng(1) }).decide(requestFor('sql', LONG), snapshot)).toThrow(
        NoHealthyInstanceError,
      );
  });
});

describe('when a caller asks whether every instance is healthy and serves the same models (allHealthySameModels)', () => {
  it('GIVEN all healthy and every list unknown, or every list equal (other Set objects) THEN true', () => {
    expect(allHealthySameModels([view(0, undefined), view(1, undefined)])).toBe(true);
    expect(allHealthySameModels([view(0, ['base', 'sql']), view(1, ['sql', 'base'])])).toBe(true);
  });

  it('GIVEN no instance, one down, an unknown list beside a known one, or lists that differ THEN false', () => {
    expect(allHealthySameModels([])).toBe(false);
    expect(allHealthySameModels([view(0, undefined), view(1, undefined, { healthy: false })])).toBe(false);
    expect(allHealthySameModels([view(0, undefined), view(1, ['base'])])).toBe(false);
    expect(allHealthySameModels([view(0, ['base']), view(1, undefined)])).toBe(false);
    expect(allHealthySameModels([view(0, ['base']), view(1, ['base', 'sql'])])).toBe(false);
    expect(allHealthySameModels([view(0, ['base', 'chat']), view(1, ['base', 'sql'])])).toBe(false);
  });

  it('GIVEN a snapshot that says so THEN requireServingInstance answers from the first instance: known models pass, others are unknown', () => {
    const instances = [view(0, ['base', 'sql']), view(1, ['base', 'sql'])];
    const snapshot = { instances, nowMs: 0, allHealthySameModels: allHealthySameModels(instances) };
    expect(snapshot.allHealthySameModels).toBe(true);
    expect(() => requireServingInstance(snapshot, 'sql')).not.toThrow();
    expect(() => requireServingInstance(snapshot, '')).not.toThrow();
    expect(() => requireServingInstance(snapshot, 'chat')).toThrow(new UnknownModelError('chat'));
  });
});

describe('when the routing core decides for a fleet serving different adapters', () => {
  it.each(POLICY_NAMES)(
    'GIVEN policy %s and any layout THEN every decision is an instance serving the request model',
    (name) => {
      fc.assert(
        fc.property(
          fc.array(fc.subarray(['base', 'sql', 'chat']), { minLength: 1, maxLength: 6 }),
          fc.array(fc.tuple(fc.constantFrom('base', 'sql', 'chat'), fc.integer({ min: 0, max: 5 })), {
            minLength: 1,
            maxLength: 20,
          }),
          (layout, requests) => {
            const loads = layout.map(() => new InstanceLoad());
            const views = layout.map((models, i) => view(i, models));
            const core = new RoutingCore(createPolicy({ name }, { rng: new SeededRng(3) }), (id) => {
              const i = views.findIndex((v) => v.id === id);
              return i < 0 ? undefined : { load: loads[i] };
            });
            for (const [model, prompt] of requests) {
              const routed = core.begin(requestFor(model, `${LONG} prompt ${prompt}`));
              const served = layout.some((models) => models.includes(model));
              if (!served) {
                expect(() => routed.decide({ instances: views, nowMs: 0 })).toThrow(UnknownModelError);
                continue;
              }
              const attempt = routed.decide({ instances: views, nowMs: 0 });
              expect(layout[views.findIndex((v) => v.id === attempt.decision.instance)]).toContain(model);
              routed.end({ kind: 'completed' });
            }
          },
        ),
        { numRuns: 60 },
      );
    },
  );

  it('GIVEN sagemaker-prefix-aware THEN each adapter keeps each prefix on one instance of its own set', () => {
    const views = [
      view(0, ['base', 'sql']),
      view(1, ['base', 'sql']),
      view(2, ['base', 'chat']),
      view(3, ['base', 'chat']),
    ];
    const policy = createPolicy(
      { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 8 },
      { rng: new SeededRng(1) },
    );
    for (const model of ['sql', 'chat']) {
      for (let p = 0; p < 20; p++) {
        const text = `${p}:${LONG}`;
        const first = policy.decide(requestFor(model, text), { instances: views, nowMs: 0 }).instance;
        const again = policy.decide(requestFor(model, `${text} another question`), {
          instances: views,
          nowMs: 0,
        }).instance;
        expect(again).toBe(first);
        expect(views.find((v) => v.id === first)!.servedModels!.has(model)).toBe(true);
      }
    }
  });
});

describe('when cache-aware keys routing blocks', () => {
  it('GIVEN one prompt under two adapters (or an adapter and its base model) THEN no block hash is shared', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 64 * 3, maxLength: 64 * 6 }),
        fc.constantFrom(['sql', 'chat'], ['sql', 'base'], ['chat', 'base']),
        (text, [a, b]) => {
          const ha = new Set(routingBlockHashes(requestFor(a, text), 64));
          const hb = routingBlockHashes(requestFor(b, text), 64);
          expect(hb.length).toBeGreaterThan(0);
          for (const h of hb) expect(ha.has(h)).toBe(false);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('GIVEN a prompt indexed under adapter sql THEN the same prompt under chat predicts nothing cached, and sql still does after chat requests passed over its instance', () => {
    const views = [view(0, ['base', 'sql']), view(1, ['base', 'sql', 'chat'])];
    const policy = createPolicy({ name: 'cache-aware', blockChars: 64 }, { rng: new SeededRng(1) });
    const decide = (model: string) => {
      const request = requestFor(model, LONG);
      const decision = policy.decide(request, { instances: views, nowMs: 0 });
      policy.commit(request, decision);
      policy.release(request, decision, { kind: 'completed' });
      return decision;
    };
    const sql = decide('sql');
    expect(decide('sql').predictedCachedTokens).toBeGreaterThan(0);
    const chat = decide('chat');
    expect(chat.instance).toBe(views[1].id);
    expect(chat.predictedCachedTokens ?? 0).toBe(0);
    const sqlAgain = decide('sql');
    expect(sqlAgain.instance).toBe(sql.instance);
    expect(sqlAgain.predictedCachedTokens).toBeGreaterThan(0);
  });
});
