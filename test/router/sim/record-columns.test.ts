import fc from 'fast-check';
import { RecordColumns } from '../../../router/src/sim/record-columns';
import type { RequestRecord } from '../../../router/src/report/request-record';

describe('RecordColumns', () => {
  const instanceIds = ['instance-0', 'instance-1', 'instance-2'];
  // Fields both kinds of record carry.
  const common = {
    id: fc.string({ minLength: 1, maxLength: 8 }),
    instance: fc.integer({ min: 0, max: 2 }),
    sentAtMs: fc.double({ min: 0, max: 1e7, noNaN: true }),
    e2eMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
    decisionMicros: fc.double({ min: 0, max: 1e4, noNaN: true }),
    predicted: fc.option(fc.nat(200_000), { nil: undefined }),
  };
  const finished = fc.record({
    ...common,
    kind: fc.constant('finished' as const),
    ttftMs: fc.double({ min: 0, max: 1e5, noNaN: true }),
    promptTokens: fc.nat(200_000),
    cachedPromptTokens: fc.nat(200_000),
    outputTokens: fc.nat(4_000),
    reason: fc.option(fc.constantFrom('cache-match', 'balanced', 'prefix-affinity'), { nil: undefined }),
  });
  const rejected = fc.record({
    ...common,
    kind: fc.constant('rejected' as const),
    reason: fc.option(fc.constantFrom('cache-match', 'cold-rendezvous'), { nil: undefined }),
    error: fc.constantFrom('http_400_prompt_too_long', 'http_400_invalid'),
    errorDetail: fc.constantFrom("This model's maximum context length is 8192 tokens.", 'the prompt is empty'),
  });

  test('GIVEN any records pushed WHEN read back THEN they equal, key for key and in order, the objects the simulator builds', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(finished, rejected), { maxLength: 3000 }), (pushes) => {
        const columns = new RecordColumns(instanceIds);
        const expected: RequestRecord[] = [];
        for (const r of pushes) {
          const predictedField = r.predicted !== undefined ? { predictedCachedTokens: r.predicted } : {};
          if (r.kind === 'finished') {
            columns.pushFinished(
              r.id,
              r.instance,
              r.sentAtMs,
              r.ttftMs,
              r.e2eMs,
              r.promptTokens,
              r.cachedPromptTokens,
              r.outputTokens,
              r.decisionMicros,
              r.reason,
              r.predicted,
            );
            expected.push({
              id: r.id,
              instance: instanceIds[r.instance],
              sentAtMs: r.sentAtMs,
              ttftMs: r.ttftMs,
              e2eMs: r.e2eMs,
              promptTokens: r.promptTokens,
              cachedPromptTokens: r.cachedPromptTokens,
              outputTokens: r.outputTokens,
              decisionMicros: r.decisionMicros,
              reason: r.reason,
              ...predictedField,
            });
          } else {
            columns.pushRejected(
              r.id,
              r.instance,
              r.sentAtMs,
              r.e2eMs,
              r.decisionMicros,
              r.reason,
              r.predicted,
              r.error,
              r.errorDetail,
            );
            expected.push({
              id: r.id,
              instance: instanceIds[r.instance],
              sentAtMs: r.sentAtMs,
              ttftMs: null,
              e2eMs: r.e2eMs,
              decisionMicros: r.decisionMicros,
              reason: r.reason,
              ...predictedField,
              error: r.error,
              errorDetail: r.errorDetail,
            });
          }
        }
        const records = columns.toRecords();
        expect(columns.length).toBe(pushes.length);
        expect(records).toEqual(expected);
        // Key order and presence (a reason of undefined is a key too), as a digest of the JSON would see them.
        expect(records.map((r) => Object.keys(r))).toEqual(expected.map((r) => Object.keys(r)));
        expect(JSON.stringify(records)).toBe(JSON.stringify(expected));
      }),
      { numRuns: 30 },
    );
  });
});
