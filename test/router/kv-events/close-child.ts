/**
 * Run by kv-event-subscriber.test.ts in a child process: a publisher and a subscriber exchange one batch and close.
 * The process must then exit on its own: an open ZeroMQ socket would keep it alive until the test's timeout.
 */
import pino from 'pino';
import { Registry } from 'prom-client';
import { KvEventPublisher } from '../../../router/src/kv-events/kv-event-publisher';
import { KvEventSubscriber } from '../../../router/src/kv-events/kv-event-subscriber';
import type { KvEventBatch } from '../../../router/src/kv-events/kv-event';

async function main(): Promise<void> {
  const publisher = await KvEventPublisher.bind({ endpoint: 'tcp://127.0.0.1:0', replayEndpoint: 'tcp://127.0.0.1:0' });
  const batches: KvEventBatch[] = [];
  const subscriber = await KvEventSubscriber.connect({
    engine: 'child',
    endpoint: publisher.endpoint,
    replayEndpoint: publisher.replayEndpoint,
    sink: { applyBatch: (_engine, batch) => batches.push(batch), markStale: () => undefined },
    registry: new Registry(),
    logger: pino({ level: 'silent' }),
  });
  for (let i = 0; i < 200 && batches.length === 0; i++) {
    publisher.publish([{ type: 'AllBlocksCleared' }]);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await subscriber.close();
  await publisher.close();
  process.stdout.write(`closed after ${batches.length > 0 ? 1 : 0} batch\n`);
}

void main();
