import type { IncomingMessage } from 'node:http';
import { RouterError } from '../protocol';
import type { BodyBudget } from './body-budget';

/** Thrown when the client disconnects while its body is being read: nothing to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super('client disconnected while sending the request');
    this.name = 'ClientGoneError';
  }
}

/**
 * Reads the whole request body, bounded in size (413, checked first against Content-Length) and in time: 408 after
 * `timeouts.totalMs`, or after `timeouts.idleMs` without a byte. The router needs the whole body before it can route
 * (the key is in it). With a `budget`, the body's bytes are taken from it as they arrive (503 when they do not fit),
 * never reserved from the declared length; on success the caller owns them and gives them back when the request
 * ends, on failure they are given back here.
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  timeouts: BodyTimeouts,
  budget?: BodyBudget,
): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    return Promise.reject(tooLarge(maxBytes));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const startedMs = performance.now();
    let lastByteMs = startedMs;
    const idleMs = Math.min(timeouts.idleMs, timeouts.totalMs);
    const finish = (error: Error | undefined, body?: Buffer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (error === undefined) return resolve(body as Buffer);
      budget?.give(size);
      reject(error);
    };
    // One timer for both bounds, set again only when it fires while the body still comes: a body read at once costs
    // one timer, not two and a re-arm per chunk (part of the router's CPU per request in bench:router).
    const checkTimeouts = (): void => {
      const now = performance.now();
      if (now - startedMs >= timeouts.totalMs)
        return finish(new RouterError('request_timeout', `request body not received within ${timeouts.totalMs} ms`));
      if (now - lastByteMs >= idleMs)
        return finish(new RouterError('request_timeout', `no request body byte received for ${idleMs} ms`));
      const next = Math.min(lastByteMs + idleMs, startedMs + timeouts.totalMs) - now;
      timer = setTimeout(checkTimeouts, Math.max(1, Math.ceil(next)));
    };
    let timer = setTimeout(checkTimeouts, idleMs);
    const onData = (chunk: Buffer): void => {
      lastByteMs = performance.now();
      if (size + chunk.length > maxBytes) return finish(tooLarge(maxBytes));
      try {
        budget?.take(chunk.length);
      } catch (err) {
        return finish(err as Error);
      }
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = (): void => finish(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    const onError = (): void => finish(new ClientGoneError());
    const onClose = (): void => finish(new ClientGoneError());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** How long a body may take in all (limits.bodyTimeoutMs) and between two of its bytes (limits.bodyIdleTimeoutMs). */
export interface BodyTimeouts {
  readonly totalMs: number;
  readonly idleMs: number;
}

function tooLarge(maxBytes: number): RouterError {
  return new RouterError('payload_too_large', `request body is larger than the ${maxBytes}-byte limit`);
}
