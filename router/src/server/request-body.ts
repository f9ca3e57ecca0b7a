import type { IncomingMessage } from 'node:http';
import { RouterError } from '../protocol';

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
 */
export function readBody(req: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    return Promise.reject(tooLarge(maxBytes));
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
      if (error) reject(error);
      else resolve(body as Buffer);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) finish(tooLarge(maxBytes));
      else chunks.push(chunk);
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
