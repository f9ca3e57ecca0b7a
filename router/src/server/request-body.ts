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
 * Reads the whole request body, bounded in size (413, checked first against Content-Length) and in time
 * (408 after `timeoutMs`). The router needs the whole body before it can route (the key is in it).
 * With a `budget`, the body's bytes are taken from it as they arrive (503 when they do not fit, the declared length
 * checked first); on success the caller owns them and gives them back when the request ends, on failure they are
 * given back here.
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  timeoutMs: number,
  budget?: BodyBudget,
): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    return Promise.reject(tooLarge(maxBytes));
  }
  let taken = 0;
  try {
    // The declared length is taken up front, so a request that cannot fit is refused before any byte is read.
    if (budget !== undefined && declared !== undefined && Number(declared) > 0) {
      budget.take(Number(declared));
      taken = Number(declared);
    }
  } catch (err) {
    return Promise.reject(err);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | undefined, body?: Buffer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (error) {
        budget?.give(taken);
        reject(error);
      } else {
        // Hold exactly the body's size (a declared length the body fell short of would otherwise stay taken).
        if (budget !== undefined && size !== taken) {
          budget.give(taken);
          taken = 0;
          try {
            budget.take(size);
          } catch (err) {
            reject(err);
            return;
          }
        }
        resolve(body as Buffer);
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) return finish(tooLarge(maxBytes));
      if (budget !== undefined && size > taken) {
        try {
          budget.take(size - taken);
          taken = size;
        } catch (err) {
          return finish(err as Error);
        }
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    const onError = (): void => finish(new ClientGoneError());
    const onClose = (): void => finish(new ClientGoneError());
    const timer = setTimeout(
      () => finish(new RouterError('request_timeout', `request body not received within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function tooLarge(maxBytes: number): RouterError {
  return new RouterError('payload_too_large', `request body is larger than the ${maxBytes}-byte limit`);
}
