/**
 * vLLM's two waiting queues (vllm/v1/core/sched/request_queue.py at 9feb38cacfe75c77aa5f45f99d135c02702db7e0):
 * FCFSRequestQueue (a deque; `prepend_request` puts a preempted request in front) and PriorityRequestQueue (a heap
 * on (priority, arrival_time); `prepend_request` is `add_request`).
 */
import fc from 'fast-check';
import { FcfsWaitingQueue, PriorityWaitingQueue, type QueuedRequest } from '../../../router/src/emulator/waiting-queue';

interface Item extends QueuedRequest {
  readonly id: string;
}

let order = 0;
function item(id: string, priority: number, submittedMs: number, eligibleMs = submittedMs): Item {
  return { id, priority, submittedMs, eligibleMs, order: order++ };
}

function drainIds(queue: { popFront(): Item | undefined }): string[] {
  const ids: string[] = [];
  for (let next = queue.popFront(); next !== undefined; next = queue.popFront()) ids.push(next.id);
  return ids;
}

describe('waiting queues', () => {
  describe('when the policy is fcfs', () => {
    test('GIVEN arrivals and a preempted request THEN arrivals leave in order, the preempted one first ("appendleft")', () => {
      const queue = new FcfsWaitingQueue<Item>();
      queue.pushBack(item('a', 1, 0));
      queue.pushBack(item('b', 0, 1));
      queue.pushFront(item('preempted', 5, 9));
      queue.promote();
      expect(queue.nextPromotionMs()).toBeUndefined();
      expect(drainIds(queue)).toEqual(['preempted', 'a', 'b']);
    });
  });

  describe('when the policy is priority', () => {
    test('GIVEN eligible arrivals THEN they leave by priority, ties by arrival; a preempted request is placed by its key, not in front', () => {
      const queue = new PriorityWaitingQueue<Item>();
      queue.pushBack(item('a1', 1, 0));
      queue.pushBack(item('b0', 0, 1));
      queue.pushBack(item('c1', 1, 2));
      queue.promote(2);
      queue.pushFront(item('preempted2', 2, 0));
      expect(drainIds(queue)).toEqual(['b0', 'a1', 'c1', 'preempted2']);
    });

    test('GIVEN an arrival not yet eligible THEN it is not a candidate until promoted, and nextPromotionMs says when', () => {
      const queue = new PriorityWaitingQueue<Item>();
      queue.pushBack(item('now', 1, 0, 1));
      queue.pushBack(item('soon', 0, 1, 2));
      queue.promote(1);
      expect(queue.peekFront()?.id).toBe('now');
      expect(queue.nextPromotionMs()).toBe(2);
      queue.promote(2);
      expect(queue.peekFront()?.id).toBe('soon');
      expect(queue.nextPromotionMs()).toBeUndefined();
      expect(queue.length).toBe(2);
    });

    test('GIVEN random items promoted, removed and popped THEN the order is always sorted by (priority, arrival, order)', () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              priority: fc.integer({ min: -2, max: 2 }),
              gap: fc.integer({ min: 0, max: 3 }),
              drop: fc.boolean(),
            }),
            {
              maxLength: 60,
            },
          ),
          (specs) => {
            const queue = new PriorityWaitingQueue<Item>();
            let t = 0;
            const items = specs.map((s, i) => item(`i${i}`, s.priority, (t += s.gap)));
            for (const it of items) queue.pushBack(it);
            queue.promote(t);
            const kept = items.filter((it, i) => !(specs[i].drop && queue.remove(it)));
            expect(queue.length).toBe(kept.length);
            const expected = [...kept]
              .sort((a, b) => a.priority - b.priority || a.submittedMs - b.submittedMs || a.order - b.order)
              .map((it) => it.id);
            expect(drainIds(queue)).toEqual(expected);
          },
        ),
        { numRuns: 100 },
      );
    });
  });
});
