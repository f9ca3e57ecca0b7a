import type { Socket } from 'node:net';
import { openAiErrorBody, RouterError } from '../protocol';

/**
 * Answers what Node's HTTP parser rejects before a request exists (bad syntax, header overflow, header
 * timeout) with the same OpenAI-style JSON errors as everything else, instead of Node's bare status line, then
 * closes the connection. A socket that is already gone, or mid-response, is just destroyed.
 */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  const inResponse =
    (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (err.code === 'ECONNRESET' || !socket.writable || inResponse) {
    socket.destroy();
    return;
  }
  const error = clientErrorFor(err.code);
  const body = JSON.stringify(openAiErrorBody(error));
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.destroySoon();
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

export function clientErrorFor(code: string | undefined): RouterError {
  if (code === 'HPE_HEADER_OVERFLOW')
    return new RouterError('headers_too_large', 'request headers are larger than the limit');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new RouterError('request_timeout', 'request headers not received in time');
  return new RouterError('malformed_request', `malformed HTTP request${code !== undefined ? ` (${code})` : ''}`);
}
