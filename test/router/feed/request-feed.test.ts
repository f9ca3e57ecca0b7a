import { RequestFeed } from '../../../router/src/feed/request-feed';
import type { WorkloadRequest } from '../../../router/src/workload/workload-request';

function req(index: number, dependsOnId?: string): WorkloadRequest {
  return { index, id: `r${index}`, arrivalMs: index * 10, maxTokens: 4, kind: 'completion', prompt: 'p', dependsOnId };
}

describe('RequestFeed', () => {
  describe('when the load is open loop', () => {
    test('GIVEN a request whose dependency has not completed WHEN it arrives THEN it is parked until the dependency completes', () => {
      const feed = new RequestFeed([req(0), req(1, 'r0'), req(2)], { mode: 'open-poisson', ratePerSecond: 1 });
      const a = feed.nextArrival()!;
      expect(feed.release(a)).toBe(true);
      const b = feed.nextArrival()!;
      expect(feed.release(b)).toBe(false);
      const c = feed.nextArrival()!;
      expect(feed.release(c)).toBe(true);
      expect(feed.nextArrival()).toBeUndefined();
      expect(feed.done).toBe(false); // r1 is still parked
      expect(feed.complete('r0').map((r) => r.id)).toEqual(['r1']);
      expect(feed.done).toBe(true);
    });

    test('GIVEN a dependency that already completed WHEN the dependent arrives THEN it is sendable at once', () => {
      const feed = new RequestFeed([req(0), req(1, 'r0')], { mode: 'open-poisson', ratePerSecond: 1 });
      feed.release(feed.nextArrival()!);
      feed.complete('r0');
      expect(feed.release(feed.nextArrival()!)).toBe(true);
    });
  });

  describe('when the load is closed loop', () => {
    test('GIVEN a blocked request WHEN its dependency completes THEN it goes before later requests', () => {
      const feed = new RequestFeed([req(0), req(1, 'r0'), req(2), req(3)], { mode: 'closed', concurrency: 2 });
      expect(feed.nextSendable()!.id).toBe('r0');
      expect(feed.nextSendable()!.id).toBe('r2'); // r1 waits for r0 and keeps its place
      feed.complete('r0');
      expect(feed.nextSendable()!.id).toBe('r1');
      expect(feed.nextSendable()!.id).toBe('r3');
      expect(feed.nextSendable()).toBeUndefined();
      expect(feed.done).toBe(true);
    });

    test('GIVEN maxRequests WHEN the workload is longer THEN the feed stops at maxRequests', () => {
      const feed = new RequestFeed([req(0), req(1), req(2)], { mode: 'closed', concurrency: 1 }, 2);
      expect(feed.nextSendable()!.id).toBe('r0');
      expect(feed.nextSendable()!.id).toBe('r1');
      expect(feed.nextSendable()).toBeUndefined();
      expect(feed.issuedCount).toBe(2);
    });
  });
});
