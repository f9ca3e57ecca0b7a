/**
 * Parses and validates the OpenAI chat-completions and completions bodies the emulator serves, into the one
 * thing the engine needs (the prompt text) plus how to answer (stream, usage). Unsupported features are
 * refused with a 400 that says so, rather than silently ignored: n > 1, non-text content parts, batched or
 * token-id prompts. Sampling parameters (temperature, top_p, ...) are accepted and have no effect.
 */
import { chatTemplate, type ChatMessage } from './chat-template';
import { badRequest } from './emulator-errors';

export type CompletionKind = 'chat' | 'completion';

export interface CompletionRequest {
  readonly kind: CompletionKind;
  /** `model` from the body, if any. */
  readonly model: string | undefined;
  /** What the engine tokenizes: the rendered chat template, or the completion prompt. */
  readonly promptText: string;
  /** Requested output tokens; undefined = the profile default. */
  readonly maxTokens: number | undefined;
  readonly stream: boolean;
  /** stream_options.include_usage: send a last chunk with usage before [DONE]. */
  readonly includeUsage: boolean;
  /** vLLM's `cache_salt`: the engine shares cached blocks only among requests with the same salt. */
  readonly cacheSalt?: string;
  /** vLLM's `priority` (lower is sooner; default 0): honoured by an engine with `--scheduling-policy priority`. */
  readonly priority?: number;
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a request body buffer as a JSON object. */
export function parseJsonObject(raw: Buffer): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw badRequest(`request body is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(value)) throw badRequest('request body must be a JSON object');
  return value;
}

function optionalInteger(body: JsonObject, field: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw badRequest(`${field} must be an integer >= 1, got ${JSON.stringify(value)}`, field);
  }
  return value;
}

function commonFields(body: JsonObject): Omit<CompletionRequest, 'kind' | 'promptText' | 'maxTokens'> {
  const model = body.model;
  if (model !== undefined && model !== null && typeof model !== 'string')
    throw badRequest('model must be a string', 'model');
  const stream = body.stream;
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean')
    throw badRequest('stream must be a boolean', 'stream');
  const options = body.stream_options;
  let includeUsage = false;
  if (options !== undefined && options !== null) {
    if (stream !== true) throw badRequest('stream_options can only be set when stream is true', 'stream_options');
    if (!isObject(options)) throw badRequest('stream_options must be an object', 'stream_options');
    const flag = options.include_usage;
    if (flag !== undefined && flag !== null && typeof flag !== 'boolean') {
      throw badRequest('stream_options.include_usage must be a boolean', 'stream_options.include_usage');
    }
    includeUsage = flag === true;
  }
  const n = body.n;
  if (n !== undefined && n !== null && n !== 1)
    throw badRequest(`the emulator generates one choice per request: n must be 1, got ${JSON.stringify(n)}`, 'n');
  const salt = body.cache_salt;
  if (salt !== undefined && salt !== null && (typeof salt !== 'string' || salt === ''))
    throw badRequest('cache_salt must be a non-empty string', 'cache_salt');
  const priority = body.priority;
  if (priority !== undefined && priority !== null && !Number.isSafeInteger(priority))
    throw badRequest(`priority must be an integer, got ${JSON.stringify(priority)}`, 'priority');
  return {
    model: typeof model === 'string' ? model : undefined,
    stream: stream === true,
    includeUsage,
    ...(typeof salt === 'string' ? { cacheSalt: salt } : {}),
    ...(typeof priority === 'number' ? { priority } : {}),
  };
}

function contentText(content: unknown, index: number): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content))
    throw badRequest(
      `messages[${index}].content must be a string, an array of content parts, or null`,
      `messages[${index}].content`,
    );
  let text = '';
  content.forEach((part: unknown, j) => {
    const where = `messages[${index}].content[${j}]`;
    if (!isObject(part)) throw badRequest(`${where} must be an object`, where);
    if (part.type !== 'text')
      throw badRequest(
        `${where}.type ${JSON.stringify(part.type)} is not supported by the emulator: only "text" parts`,
        `${where}.type`,
      );
    if (typeof part.text !== 'string') throw badRequest(`${where}.text must be a string`, `${where}.text`);
    text += part.text;
  });
  return text;
}

/** The `messages` of a chat body, validated. */
export function chatMessagesOf(body: JsonObject): ChatMessage[] {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw badRequest('messages must be a non-empty array', 'messages');
  return messages.map((message: unknown, i) => {
    if (!isObject(message)) throw badRequest(`messages[${i}] must be an object`, `messages[${i}]`);
    if (typeof message.role !== 'string' || message.role === '')
      throw badRequest(`messages[${i}].role must be a non-empty string`, `messages[${i}].role`);
    return { role: message.role, content: contentText(message.content, i) };
  });
}

/** /v1/chat/completions */
export function parseChatRequest(body: JsonObject): CompletionRequest {
  const common = commonFields(body);
  const rendered = chatMessagesOf(body);
  // vLLM reads max_completion_tokens first, then the older max_tokens.
  const maxTokens = optionalInteger(body, 'max_completion_tokens') ?? optionalInteger(body, 'max_tokens');
  return { kind: 'chat', ...common, promptText: chatTemplate(rendered), maxTokens };
}

/** /v1/completions */
export function parseCompletionRequest(body: JsonObject): CompletionRequest {
  const common = commonFields(body);
  let prompt = body.prompt;
  if (Array.isArray(prompt)) {
    if (prompt.length !== 1)
      throw badRequest(`the emulator takes one prompt per request; got an array of ${prompt.length}`, 'prompt');
    prompt = prompt[0];
  }
  if (typeof prompt !== 'string')
    throw badRequest('prompt must be a string (token-id prompts are not supported by the emulator)', 'prompt');
  return { kind: 'completion', ...common, promptText: prompt, maxTokens: optionalInteger(body, 'max_tokens') };
}

/** SageMaker /invocations: the body's shape decides, as in vLLM's SageMaker entry point. */
export function parseInvocationRequest(body: JsonObject): CompletionRequest {
  if (body.messages !== undefined) return parseChatRequest(body);
  if (body.prompt !== undefined) return parseCompletionRequest(body);
  throw badRequest(
    'cannot tell the request type: an /invocations body needs "messages" (chat completion) or "prompt" (completion)',
  );
}
