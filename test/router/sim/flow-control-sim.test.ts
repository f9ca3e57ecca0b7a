import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLOW_CONTROL_DEFAULTS, type FlowControlSettings } from '../../../router/src/core/flow-control';
import { applyEngineArgs } from '../../../router/src/emulator/engine-args';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { percentile } from '../../../router/src/report/stats';
import { simulate } from '../../../router/src/sim/simulator';
import { parseWorkloadSpec } from '../../../router/src/workload';

/**
 * A burst on one tiny engine: every fifth request urgent (priority 0), the rest priority 1, all 700-token prompts
 * (tiny: 256-token steps), arriving faster than the engine prefills them.
 */
function burstTrace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flow-trace-'));
  const path = join(dir, 'burst.jsonl');
  const lines = Array.from(
    { length: 40 },
    (_, i) =>
      `{"timestamp": ${i * 2}, "input_length": 700, "output_length": 4, "hash_ids": [${2 * i}, ${2 * i + 1}], "priority": ${i % 5 === 0 ? 0 : 1}}`,
  );
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

describe('flow control in the simulator', () => {
  const trace = burstTrace();
  const tinyPriority = applyEngineArgs(builtinProfile('tiny'), { 'scheduling-policy': 'priority' });
  const run = (flowControl: FlowControlSettings, profile = tinyPriority) =>
    simulate({
      workload: parseWorkloadSpec(`trace:${trace}`),
      instances: 1,
      profile,
      policy: { name: 'round-robin' },
      flowControl,
    });
  const urgentP90 = (result: ReturnType<typeof run>) =>
    percentile(
      result.records.filter((r) => r.priority === 0).map((r) => r.ttftMs!),
      90,
    )!;
  const bound = { ...FLOW_CONTROL_DEFAULTS, queuedPrefillBoundTokens: 700 };

  test('GIVEN a burst WHEN lower classes wait at the router above the bound THEN every request is served, and the urgent class gets its first token sooner than with flow control off', () => {
    const on = run(bound);
    const off = run({ ...bound, mode: 'off' });
    expect(on.records).toHaveLength(40);
    expect(on.records.every((r) => r.error === undefined)).toBe(true);
    expect(urgentP90(on)).toBeLessThan(urgentP90(off));
    // What it costs: the lower class waits longer.
    const lowerMean = (result: ReturnType<typeof run>) => {
      const ttfts = result.records.filter((r) => r.priority === 1).map((r) => r.ttftMs!);
      return ttfts.reduce((a, b) => a + b, 0) / ttfts.length;
    };
    expect(lowerMean(on)).toBeGreaterThan(lowerMean(off));
  });

  test('GIVEN a router queue of 2 THEN requests beyond it are refused with 429 and recorded, not dropped', () => {
    const result = run({ ...bound, maxWaiting: 2 });
    const refused = result.records.filter((r) => r.error === 'http_429:flow_control');
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((r) => r.instance === null && r.priority === 1)).toBe(true);
    expect(result.records).toHaveLength(40);
  });

  test('GIVEN requests without a priority THEN flow control on and off route them identically', () => {
    const plain = parseWorkloadSpec(
      'long-context?groups=2&prefixTokens=300&suffixTokens=20..40&outputTokens=4&rate=40&count=30',
    );
    const config = {
      workload: plain,
      instances: 2,
      profile: builtinProfile('tiny'),
      policy: { name: 'cache-aware' as const },
    };
    const on = simulate({ ...config, flowControl: bound });
    const off = simulate({ ...config, flowControl: { ...bound, mode: 'off' } });
    // Decision times are wall-clock measurements: everything else is equal.
    const withoutTimes = (result: ReturnType<typeof simulate>) =>
      result.records.map(({ decisionMicros: _d, ...rest }) => rest);
    expect(withoutTimes(on)).toEqual(withoutTimes(off));
  });
});
