import { inlinePromptSource, type PreparedRequest } from '../../../router/src/sim/prompt-source';
import { latin1RoutingRequest } from '../../../router/src/sim/prompt-worker';
import type * as PromptWorker from '../../../router/src/sim/prompt-worker';
import { parseWorkloadSpec } from '../../../router/src/workload';
import type { RoutingRequest } from '../../../router/src/protocol/routing-request';
import { compiledModule } from '../../compiled-dist';

/** From dist/: the worker thread then loads JavaScript instead of compiling the hashing modules under ts-node. */
const { startPromptWorker } = compiledModule<typeof PromptWorker>('router/src/sim/prompt-worker');

const SETTINGS = { blockTokens: 16, model: 'model' };

/** A prepared request as plain data: the routing text read through whatever getter carries it. */
function plain(request: PreparedRequest): object {
  return { ...request, routing: { ...request.routing }, hashes: Array.from(request.hashes) };
}

describe('prompt worker', () => {
  it.each([
    'long-context?groups=3&rate=40&count=90&prefixTokens=300',
    'short-chat?count=60&rate=30',
    'trace:mooncake-synthetic?count=40',
  ])(
    'hands over the same prepared requests as the inline source, routing texts included (%s)',
    (spec) => {
      const inline = [...inlinePromptSource(parseWorkloadSpec(spec), SETTINGS).requests].map(plain);
      const viaWorker = [...startPromptWorker(parseWorkloadSpec(spec), SETTINGS).requests].map(plain);
      expect(viaWorker.length).toBe(inline.length);
      expect(viaWorker).toEqual(inline);
    },
    60_000,
  );
});

describe('latin1RoutingRequest', () => {
  const base: RoutingRequest = {
    model: 'm',
    api: 'chat',
    keyBasis: 'message-text',
    routingText: '',
    tenantKey: 't',
    stream: false,
  };

  it('reads back the text it was given as Latin-1 bytes, on every read, with the other fields unchanged', () => {
    const text = 'Plain words, café, ÿ and \u0000.';
    const request = latin1RoutingRequest(base, Buffer.from(text, 'latin1'));
    expect(request.routingText).toBe(text);
    expect(request.routingText).toBe(text);
    expect({ ...request }).toEqual({ ...base, routingText: text });
    expect(base.routingText).toBe('');
  });

  it('gives each request its own text when reads of several requests interleave (only the last decoded is kept)', () => {
    const texts = ['first text', 'second, longer text', 'first text'];
    const requests = texts.map((t) => latin1RoutingRequest(base, Buffer.from(t, 'latin1')));
    for (const order of [
      [0, 1, 2],
      [2, 0, 0, 1],
      [1, 2, 1, 0],
    ]) {
      for (const i of order) expect(requests[i].routingText).toBe(texts[i]);
    }
  });
});
