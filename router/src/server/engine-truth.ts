import { EmulatorRequestTokenizer } from '../emulator/emulator-request-tokenizer';
import type { KvEventSource, KvEventStream } from '../kv-events/kv-event-source';
import { ModelRequestTokenizer, type RequestTokenizer } from '../kv-events/request-tokenizer';
import { loadModelTokenizer } from '../state/tokenizer-file';
import { EngineTruth } from '../core/engine-truth';

/**
 * The engines' truth serve follows (core/engine-truth.ts): each backend's events from `source` (the ZeroMQ
 * subscribers), and each request tokenized as its engine does by `tokenizer`.
 */
export class LiveEngineTruth extends EngineTruth {
  constructor(
    private readonly streams: readonly KvEventStream[],
    tokenizer: RequestTokenizer,
    private readonly source: KvEventSource,
  ) {
    super(
      streams.map((s) => s.engine),
      (request, worthGoingOn) =>
        request.enginePrompt === undefined ? undefined : tokenizer.promptBlocksOf(request.enginePrompt, worthGoingOn),
    );
  }

  start(): void {
    this.source.start(this.streams, this);
  }

  close(): Promise<void> {
    return this.source.close();
  }
}

/** The request tokenizer `--tokenizer` names: `emulator`, or a model's tokenizer.json (errors name the flag and file). */
export function requestTokenizerOf(spec: string): RequestTokenizer {
  return spec === 'emulator' ? new EmulatorRequestTokenizer() : new ModelRequestTokenizer(loadModelTokenizer(spec));
}

/** The engines' truth a router follows (`kvEvents`), or undefined without any; `source` delivers the events. */
export function engineTruthOf(
  streams: readonly KvEventStream[],
  tokenizer: string | undefined,
  source: () => KvEventSource,
): LiveEngineTruth | undefined {
  if (streams.length === 0 || tokenizer === undefined) return undefined;
  return new LiveEngineTruth(streams, requestTokenizerOf(tokenizer), source());
}
