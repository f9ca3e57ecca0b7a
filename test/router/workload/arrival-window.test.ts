import { workloadWindow } from '../../../router/src/workload/arrival-window';
import { parseWorkloadSpec, type WorkloadRequest } from '../../../router/src/workload';

const take = (requests: Iterable<WorkloadRequest>) => [...requests];

describe('when a stretch of a workload’s arrivals is replayed on its own', () => {
  const chat = parseWorkloadSpec('short-chat?rate=4&duration=60&seed=3');
  const all = take(chat.requests());

  test('GIVEN [20 s, 40 s) THEN exactly the requests arriving then come out, shifted to start at 0 and renumbered from 0, texts unchanged', () => {
    const window = take(workloadWindow(chat, { fromMs: 20_000, untilMs: 40_000 }).requests());
    const expected = all.filter((r) => r.arrivalMs >= 20_000 && r.arrivalMs < 40_000);
    expect(window.map((r) => r.id)).toEqual(expected.map((r) => r.id));
    expect(window.map((r) => r.arrivalMs)).toEqual(expected.map((r) => r.arrivalMs - 20_000));
    expect(window.map((r) => r.index)).toEqual(expected.map((_, i) => i));
    expect(window.map((r) => (r.kind === 'chat' ? r.messages : r.prompt))).toEqual(
      expected.map((r) => (r.kind === 'chat' ? r.messages : r.prompt)),
    );
  });

  test('GIVEN a turn whose previous turn arrived before the stretch THEN it is sent without that dependency; one inside keeps it', () => {
    const window = take(workloadWindow(chat, { fromMs: 20_000, untilMs: 40_000 }).requests());
    const ids = new Set(window.map((r) => r.id));
    const original = new Map(all.map((r) => [r.id, r]));
    expect(
      window.some((r) => original.get(r.id)!.dependsOnId !== undefined && !ids.has(original.get(r.id)!.dependsOnId!)),
    ).toBe(true);
    for (const r of window) {
      const before = original.get(r.id)!.dependsOnId;
      expect(r.dependsOnId).toBe(before !== undefined && ids.has(before) ? before : undefined);
    }
  });

  test('GIVEN warm-up with itself THEN the stretch comes twice, the first pass with suffixed ids and its own dependencies, the second one window later', () => {
    const once = take(workloadWindow(chat, { fromMs: 20_000, untilMs: 40_000 }).requests());
    const twice = take(workloadWindow(chat, { fromMs: 20_000, untilMs: 40_000, warmUpWithItself: true }).requests());
    expect(twice).toHaveLength(2 * once.length);
    const [warm, measured] = [twice.slice(0, once.length), twice.slice(once.length)];
    expect(warm.map((r) => r.id)).toEqual(once.map((r) => `${r.id}~warm-up`));
    expect(warm.map((r) => r.dependsOnId)).toEqual(
      once.map((r) => (r.dependsOnId === undefined ? undefined : `${r.dependsOnId}~warm-up`)),
    );
    expect(measured.map((r) => [r.id, r.arrivalMs, r.dependsOnId])).toEqual(
      once.map((r) => [r.id, r.arrivalMs + 20_000, r.dependsOnId]),
    );
    expect(new Set(twice.map((r) => r.id)).size).toBe(twice.length);
  });

  test.each([
    [{ fromMs: 10, untilMs: 10 }, 'needs 0 ≤ fromMs < untilMs'],
    [{ fromMs: -1, untilMs: 10 }, 'needs 0 ≤ fromMs < untilMs'],
  ])('GIVEN %p THEN it is refused', (window, message) => {
    expect(() => workloadWindow(chat, window)).toThrow(message);
  });

  test('GIVEN a closed-loop workload THEN it is refused: it has no arrival times', () => {
    expect(() => workloadWindow(parseWorkloadSpec('short-chat?concurrency=4'), { fromMs: 0, untilMs: 10 })).toThrow(
      'needs an open-loop workload',
    );
  });
});
