import { DECISION_HEADER, DECISION_TIME_HEADER, PREDICTED_CACHED_HEADER } from '../protocol/routing-headers';
import { parseDecimalInteger, parseDecimalNumber } from '../common/decimal-text';
import type { SseDecoder } from './sse-decoder';
import { readOrdinaryEvent, readStreamEvent, type StreamUsage } from './stream-chunk';

/**
 * What one streamed answer amounted to, counted the same way by both streaming transports (HTTP to a router or
 * vLLM, InvokeEndpointWithResponseStream to SageMaker): the first token's time, output events, usage, the end
 * marker and the first error. The transports differ only in how bytes arrive; everything they measure is here.
 */
export class StreamTally {
  firstTokenAt: number | null = null;
  usage: StreamUsage | undefined;
  generatedEvents = 0;
  error: string | undefined;
  errorDetail: string | undefined;
  private sawDone = false;

  /** Feeds decoded bytes that arrived at `at` (performance.now()). */
  push(decoder: SseDecoder, bytes: Buffer, at: number): void {
    for (const event of decoder.push(bytes)) this.event(event.type, event.data, at);
  }

  /** The stream ended at `at`: flushes the decoder; a stream without its end marker is incomplete. */
  end(decoder: SseDecoder, at: number): void {
    for (const event of decoder.end()) this.event(event.type, event.data, at);
    if (this.error === undefined && !this.sawDone) this.error = 'stream_incomplete';
  }

  private event(type: string, data: string, at: number): void {
    if (this.firstTokenAt !== null) {
      // After the first token most events only count as output; the fast path skips parsing them.
      const ordinary = readOrdinaryEvent(type, data);
      if (ordinary !== undefined) {
        if (ordinary.generated) this.generatedEvents++;
        return;
      }
    }
    const info = readStreamEvent(type, data);
    switch (info.kind) {
      case 'done':
        this.sawDone = true;
        return;
      case 'chunk':
        if (info.generated) {
          this.generatedEvents++;
          this.firstTokenAt ??= at;
        }
        if (info.usage !== undefined) this.usage = info.usage;
        return;
      case 'error':
        this.error ??= `stream_error:${info.code}`;
        this.errorDetail ??= info.message.slice(0, 300);
        return;
      case 'invalid':
        this.error ??= 'bad_stream_data';
        this.errorDetail ??= info.message;
    }
  }
}

/** The router's decision headers (protocol/routing-headers.ts) on an answer, each when present and well formed. */
export interface RoutingHeaderFacts {
  readonly decisionMicros?: number;
  readonly decisionReason?: string;
  readonly predictedCachedTokens?: number;
}

/** Reads the decision headers through `header` (lower-case name → value or undefined); malformed values are left out. */
export function routingHeaderFacts(header: (name: string) => string | undefined): RoutingHeaderFacts {
  const micros = parseDecimalNumber(header(DECISION_TIME_HEADER) ?? '');
  const predicted = parseDecimalInteger(header(PREDICTED_CACHED_HEADER) ?? '');
  const reason = header(DECISION_HEADER);
  return {
    ...(micros !== undefined && micros >= 0 ? { decisionMicros: micros } : {}),
    ...(reason !== undefined && reason !== '' ? { decisionReason: reason } : {}),
    ...(predicted !== undefined && predicted >= 0 ? { predictedCachedTokens: predicted } : {}),
  };
}
