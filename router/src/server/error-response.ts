import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { openAiErrorBody, type ErrorDialect, type RouterError } from '../protocol';

/**
 * Writes an error response from the registry: OpenAI-style body; on SageMaker runtime-API paths also the
 * fields and header the AWS SDK reads (x-amzn-errortype, message/Message, ModelError's Original* fields).
 * If the request body was not read (the error came first), the connection is closed after the answer and the
 * rest of the body discarded, so a half-read body never leaks into the next request.
 */
export function sendError(
  req: IncomingMessage,
  res: ServerResponse,
  error: RouterError,
  dialect: ErrorDialect,
  extraHeaders: OutgoingHttpHeaders = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const payload: Record<string, unknown> = openAiErrorBody(error);
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', ...extraHeaders };
  if (dialect === 'sagemaker-runtime') {
    headers['x-amzn-errortype'] = error.awsErrorType;
    payload.message = error.message;
    payload.Message = error.message;
    if (error.details.originalStatusCode !== undefined) payload.OriginalStatusCode = error.details.originalStatusCode;
    if (error.details.originalMessage !== undefined) payload.OriginalMessage = error.details.originalMessage;
  }
  if (error.details.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.details.retryAfterSeconds);
  if (error.details.authenticate !== undefined) headers['www-authenticate'] = error.details.authenticate;
  if (error.details.allow !== undefined) headers.allow = error.details.allow.join(', ');
  if (!req.complete) {
    headers.connection = 'close';
    req.resume();
  }
  const body = JSON.stringify(payload);
  headers['content-length'] = Buffer.byteLength(body);
  res.writeHead(error.status, headers);
  res.end(body);
}
