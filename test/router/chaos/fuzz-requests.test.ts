import { documentedErrorCodes, runFuzz } from '../../../router/bench/chaos/fuzz-requests';
import { ROUTER_ERRORS } from '../../../router/src/protocol';

describe('when a fuzzer sends malformed requests to every route (npm test: 400 cases; npm run test:chaos: 10,000)', () => {
  it('GIVEN the docs THEN the fuzzer checks codes against every documented code', () => {
    expect([...documentedErrorCodes()].sort()).toEqual(Object.keys(ROUTER_ERRORS).sort());
  });

  it('GIVEN broken, nested, huge, wrongly typed, non-UTF-8 and badly framed requests THEN no crash, no 5xx, and every error is JSON with a documented code', async () => {
    const r = await runFuzz({ cases: 400, seed: 11, concurrency: 16 });
    expect(r.violations).toEqual([]);
    expect(r.cases).toBe(400);
    // The generator reaches the interesting answers, not just one kind of rejection.
    for (const code of [
      'invalid_json',
      'invalid_field',
      'payload_too_large',
      'headers_too_large',
      'malformed_request',
      'not_found',
      'method_not_allowed',
      'unsupported_media_type',
    ]) {
      expect(r.byCode[code] ?? 0).toBeGreaterThan(0);
    }
  }, 120_000);
});
