/**
 * The engine model's scheduler against the vLLM V1 lines it models, on hand-made cases. Sources (read with the
 * project's search tools): vllm/v1/core/sched/scheduler.py at commit b4622cf924bc72504aed99e486062d6633fde39e
 * (`Scheduler.schedule`), vllm/v1/core/sched/request_queue.py at 9feb38cacfe75c77aa5f45f99d135c02702db7e0 and
 * vllm/config/scheduler.py at 1f8758d584e8f599219d75adf658e182ed809a43.
 */
import { EngineModel, EngineRequestError, type StepRecord } from '../../../router/src/emulator/engine-model';
import { builtinProfile, validateProfile, type EngineProfile } from '../../../router/src/emulator/engine-profile';
import { finished, ofType, textOf } from './engine-text';

const tiny = builtinProfile('tiny');

function tinyWith(fields: Record<string, unknown>): EngineProfile {
  return validateProfile({ ...tiny, name: 'tiny-scheduler', ...fields });
}

function stepsOf(
  profile: EngineProfile,
  submit: (engine: EngineModel) => void,
): { steps: StepRecord[]; engine: EngineModel } {
  const steps: StepRecord[] = [];
  const engine = new EngineModel(profile, { onStep: (s) => steps.push(s) });
  submit(engine);
  return { steps, engine };
}

describe('engine scheduler (vLLM V1)', () => {
  describe('when --long-prefill-token-threshold is set', () => {
    // scheduler.py, running loop: `if 0 < self.scheduler_config.long_prefill_token_threshold < num_new_tokens:
    // num_new_tokens = self.scheduler_config.long_prefill_token_threshold`; waiting loop: `threshold = ...;
    // if 0 < threshold < num_new_tokens: num_new_tokens = threshold`.
    test('GIVEN threshold 64 and a 600-token prompt WHEN prefilled THEN its admission step (waiting) and every later chunk (running) computes at most 64 tokens', () => {
      const { steps, engine } = stepsOf(tinyWith({ longPrefillTokenThreshold: 64 }), (e) =>
        e.submit({ id: 'long', promptText: textOf('long', 600), maxTokens: 1 }, 0),
      );
      const events = engine.drain();
      // 600 = 9 × 64 + 24: ten prefill steps, the last one producing the (only) output token.
      expect(steps.map((s) => s.scheduledTokens)).toEqual([64, 64, 64, 64, 64, 64, 64, 64, 64, 24]);
      expect(ofType(events, 'first-token')).toHaveLength(1);
    });

    test('GIVEN threshold 0 (vLLM default, "0 <" is false) THEN the step budget alone chunks the prompt, as without the setting', () => {
      const run = (profile: EngineProfile) =>
        stepsOf(profile, (e) => e.submit({ id: 'long', promptText: textOf('long', 600), maxTokens: 3 }, 0));
      const capped = run(tinyWith({ longPrefillTokenThreshold: 0 }));
      const plain = run(tiny);
      expect(capped.engine.drain()).toEqual(plain.engine.drain());
      expect(capped.steps.map((s) => s.scheduledTokens)).toEqual([256, 256, 88, 1, 1]);
      expect(capped.steps).toEqual(plain.steps);
    });

    test('GIVEN a threshold at least the prompt THEN nothing changes ("threshold < num_new_tokens" is false)', () => {
      const run = (profile: EngineProfile) => {
        const { engine } = stepsOf(profile, (e) =>
          e.submit({ id: 'a', promptText: textOf('a', 200), maxTokens: 2 }, 0),
        );
        return engine.drain();
      };
      expect(run(tinyWith({ longPrefillTokenThreshold: 200 }))).toEqual(run(tiny));
    });

    test('GIVEN a long prefill running WHEN a short request arrives THEN with the threshold it joins the same step and its first token comes sooner', () => {
      const shortTtft = (profile: EngineProfile) => {
        const engine = new EngineModel(profile);
        engine.submit({ id: 'long', promptText: textOf('long', 900), maxTokens: 1 }, 0);
        engine.submit({ id: 'short', promptText: textOf('short', 20), maxTokens: 1 }, 0);
        return finished(engine.drain(), 'short').ttftMs;
      };
      // Without a cap the long prompt takes the whole 256-token budget for 3 steps (running before waiting:
      // "First, schedule the RUNNING requests"), and the short one waits for the budget left in the 4th.
      expect(shortTtft(tinyWith({ longPrefillTokenThreshold: 128 }))).toBeLessThan(shortTtft(tiny) / 2);
    });
  });

  describe('when --max-num-batched-tokens and --max-num-seqs bound a step', () => {
    // `token_budget = self.max_num_scheduled_tokens`; waiting loop `if len(self.running) == self.max_num_running_reqs: break`.
    test('GIVEN max-num-seqs 2 and a budget of 32 WHEN five requests wait THEN no step runs more than 2 sequences or 32 tokens', () => {
      const { steps, engine } = stepsOf(tinyWith({ maxNumSeqs: 2, maxNumBatchedTokens: 32 }), (e) => {
        for (let i = 0; i < 5; i++) e.submit({ id: `r${i}`, promptText: textOf(`r${i}`, 40), maxTokens: 4 }, 0);
      });
      engine.drain();
      expect(Math.max(...steps.map((s) => s.runningSequences))).toBe(2);
      expect(Math.max(...steps.map((s) => s.scheduledTokens))).toBe(32);
    });
  });

  describe('when --scheduling-policy priority orders the waiting queue', () => {
    // request_queue.py PriorityRequestQueue: "requests with a smaller value of `priority` are processed first. If
    // multiple requests have the same priority, the one with the earlier `arrival_time` is processed first."
    const admissionOrder = (profile: EngineProfile): string[] => {
      const engine = new EngineModel(profile);
      engine.submit({ id: 'busy', promptText: textOf('busy', 16), maxTokens: 20 }, 0);
      engine.runUntil(2);
      const classes: [string, number][] = [
        ['a1', 1],
        ['b0', 0],
        ['c1', 1],
        ['d0', 0],
      ];
      classes.forEach(([id, priority], i) =>
        engine.submit({ id, promptText: textOf(id, 16), maxTokens: 2, priority }, 3 + i),
      );
      return ofType(engine.drain(), 'admitted').map((e) => e.id);
    };

    test('GIVEN one sequence slot WHEN priorities 1, 0, 1, 0 arrive in that order THEN they are admitted 0s first, each class by arrival', () => {
      expect(admissionOrder(tinyWith({ maxNumSeqs: 1, schedulingPolicy: 'priority' }))).toEqual([
        'b0',
        'd0',
        'a1',
        'c1',
      ]);
    });

    test('GIVEN the FCFS policy THEN the same requests are admitted in arrival order (priority ignored)', () => {
      expect(admissionOrder(tinyWith({ maxNumSeqs: 1 }))).toEqual(['a1', 'b0', 'c1', 'd0']);
    });

    test('GIVEN a more urgent request that has not reached the engine yet THEN an eligible less urgent one is not held for it', () => {
      const engine = new EngineModel(tinyWith({ maxNumSeqs: 1, schedulingPolicy: 'priority' }));
      engine.submit({ id: 'late-1', promptText: textOf('x', 16), maxTokens: 1, priority: 1 }, 0);
      engine.submit({ id: 'urgent-0', promptText: textOf('y', 16), maxTokens: 1, priority: 0 }, 0.5);
      // The step at t = 1 (request overhead 1 ms) sees only late-1: urgent-0 becomes eligible at 1.5.
      expect(ofType(engine.drain(), 'admitted').map((e) => e.id)).toEqual(['late-1', 'urgent-0']);
    });

    test('GIVEN a priority that is not an integer THEN submit refuses it', () => {
      const engine = new EngineModel(tinyWith({ schedulingPolicy: 'priority' }));
      expect(() => engine.submit({ id: 'a', promptText: 'abcd', priority: 0.5 }, 0)).toThrow(EngineRequestError);
    });
  });

  describe('when KV runs out and a running request must be preempted', () => {
    // scheduler.py running loop: PRIORITY → `max(self.running, key=lambda r: (r.priority, r.arrival_time))`;
    // otherwise `self.running.pop()` (the most recently admitted). `_preempt_request`: `num_computed_tokens = 0`,
    // `self.waiting.prepend_request(request)` (a heap insert under priority).
    const firstVictim = (profile: EngineProfile): { victim: string; recomputed: number } => {
      const engine = new EngineModel(profile);
      // x (priority 0), y (priority 2), z (priority 1) admitted in that order; together they outgrow 128 blocks.
      engine.submit({ id: 'x', promptText: textOf('x', 600), maxTokens: 300, priority: 0 }, 0);
      engine.submit({ id: 'y', promptText: textOf('y', 600), maxTokens: 300, priority: 2 }, 1);
      engine.submit({ id: 'z', promptText: textOf('z', 600), maxTokens: 300, priority: 1 }, 2);
      const events = engine.drain();
      const victim = ofType(events, 'preempted')[0].id;
      const readmission = ofType(events, 'admitted').find((e) => e.id === victim && e.resumed);
      return { victim, recomputed: readmission === undefined ? 0 : readmission.promptTokens };
    };

    test('GIVEN the priority policy THEN the least urgent (largest priority) is preempted, not the last admitted', () => {
      expect(firstVictim(tinyWith({ schedulingPolicy: 'priority' })).victim).toBe('y');
    });

    test('GIVEN FCFS THEN the most recently admitted is preempted', () => {
      expect(firstVictim(tiny).victim).toBe('z');
    });

    test('GIVEN equal priorities THEN the latest arrival is preempted (ties by arrival_time)', () => {
      const engine = new EngineModel(tinyWith({ schedulingPolicy: 'priority' }));
      for (const [id, t] of [
        ['p', 0],
        ['q', 1],
        ['r', 2],
      ] as const)
        engine.submit({ id, promptText: textOf(id, 600), maxTokens: 300, priority: 1 }, t);
      expect(ofType(engine.drain(), 'preempted')[0].id).toBe('r');
    });

    test('GIVEN a preempted request THEN it is admitted again and recomputes what it had (the recompute cost), finishing with all its output', () => {
      const engine = new EngineModel(tinyWith({ schedulingPolicy: 'priority' }));
      engine.submit({ id: 'x', promptText: textOf('x', 600), maxTokens: 300, priority: 0 }, 0);
      engine.submit({ id: 'y', promptText: textOf('y', 600), maxTokens: 300, priority: 2 }, 1);
      engine.submit({ id: 'z', promptText: textOf('z', 600), maxTokens: 300, priority: 1 }, 2);
      const events = engine.drain();
      const preempted = ofType(events, 'preempted').find((e) => e.id === 'y');
      const resumed = ofType(events, 'admitted').find((e) => e.id === 'y' && e.resumed);
      expect(preempted).toBeDefined();
      expect(resumed).toBeDefined();
      expect(finished(events, 'y').outputTokens).toBe(300);
      expect(finished(events, 'y').preemptions).toBeGreaterThanOrEqual(1);
      expect(engine.stats().preemptedPrefixCacheQueryTokens).toBeGreaterThan(600);
      engine.checkInvariants();
    });
  });
});
