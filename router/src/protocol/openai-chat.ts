import { optionalBoolean, optionalString, type JsonObject } from './json-body';
import { RouterError } from './router-errors';
import type { EngineChatMessage, EnginePrompt } from './routing-request';

/** What routing needs from an OpenAI chat completion body. */
export interface ChatFields {
  readonly model: string;
  /** Text content of the messages, in order: string contents and the `text` of text parts. */
  readonly routingText: string;
  readonly stream: boolean;
  readonly promptCacheKey?: string;
  /** vLLM's `cache_salt`: the engine shares cached blocks only among requests with the same salt. */
  readonly cacheSalt?: string;
  readonly user?: string;
  /** The messages as the engine's chat template reads them, when the router can reproduce its prompt. */
  readonly enginePrompt?: EnginePrompt;
}

/**
 * Body members that change what vLLM renders beyond role and text (vllm/entrypoints/openai/protocol.py,
 * ChatCompletionRequest, vllm-project/vllm@0052bed3): with any of them the router does not reproduce the prompt.
 */
const TEMPLATE_CHANGING_FIELDS = ['tools', 'documents', 'chat_template', 'chat_template_kwargs'] as const;

/**
 * Validates the parts of a chat body the router relies on and extracts the routing text. Only text counts:
 * image, audio and file parts are skipped (SageMaker keys on "the text content of the messages array").
 * Everything else is left for the backend to judge; the body is forwarded byte for byte.
 */
export function readChatFields(body: JsonObject): ChatFields {
  const messages = body.messages;
  if (messages === undefined || messages === null) throw new RouterError('missing_field', 'messages is required');
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new RouterError('invalid_field', 'messages must be a non-empty array');
  }
  // Collected then joined: join() yields a flat string, which hashes ~2x faster than a chain of `+=` pieces.
  const texts: string[] = [];
  const engineMessages: EngineChatMessage[] | undefined = reproducible(body) ? [] : undefined;
  let representable = engineMessages !== undefined;
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw new RouterError('invalid_field', `messages[${i}] must be an object`);
    }
    const { role, content, tool_calls: toolCalls } = message as JsonObject;
    if (typeof role !== 'string') throw new RouterError('invalid_field', `messages[${i}].role must be a string`);
    if (toolCalls !== undefined && toolCalls !== null) representable = false;
    if (typeof content === 'string') {
      texts.push(content);
      engineMessages?.push({ role, content });
    } else if (Array.isArray(content)) {
      const first = texts.length;
      if (!textOfParts(content, i, texts)) representable = false;
      engineMessages?.push({ role, content: texts.slice(first) });
    } else if (content !== undefined && content !== null) {
      throw new RouterError(
        'invalid_field',
        `messages[${i}].content must be a string, an array of content parts, or null`,
      );
    } else {
      engineMessages?.push({ role, content: '' });
    }
  }
  return {
    model: optionalString(body, 'model') ?? '',
    routingText: texts.length === 1 ? texts[0] : texts.join(''),
    stream: optionalBoolean(body, 'stream') ?? false,
    promptCacheKey: optionalString(body, 'prompt_cache_key'),
    cacheSalt: optionalString(body, 'cache_salt'),
    user: optionalString(body, 'user'),
    ...(representable && engineMessages !== undefined
      ? {
          enginePrompt: {
            kind: 'chat',
            messages: engineMessages,
            addGenerationPrompt: optionalBoolean(body, 'add_generation_prompt') ?? true,
            addSpecialTokens: optionalBoolean(body, 'add_special_tokens') ?? false,
          },
        }
      : {}),
  };
}

/** False when the body asks vLLM to render more than its messages' roles and text (TEMPLATE_CHANGING_FIELDS). */
function reproducible(body: JsonObject): boolean {
  for (const field of TEMPLATE_CHANGING_FIELDS) {
    const value = body[field];
    if (value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0)) return false;
  }
  return body.continue_final_message !== true;
}

/** Appends the text of each text part; returns false when a part is not text (an image, audio, a file). */
function textOfParts(parts: unknown[], messageIndex: number, texts: string[]): boolean {
  let onlyText = true;
  for (let j = 0; j < parts.length; j++) {
    const part: unknown = parts[j];
    if (typeof part !== 'object' || part === null || Array.isArray(part)) {
      throw new RouterError('invalid_field', `messages[${messageIndex}].content[${j}] must be an object`);
    }
    const { type, text: partText } = part as JsonObject;
    if (typeof type !== 'string') {
      throw new RouterError('invalid_field', `messages[${messageIndex}].content[${j}].type must be a string`);
    }
    if (type === 'text') {
      if (typeof partText !== 'string') {
        throw new RouterError('invalid_field', `messages[${messageIndex}].content[${j}].text must be a string`);
      }
      texts.push(partText);
    } else {
      onlyText = false;
    }
  }
  return onlyText;
}
