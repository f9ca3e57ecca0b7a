/**
 * The text an engine tokenizes for a chat request. We render a Llama-3-style template (header and
 * end-of-turn markers around each message, then the assistant header as the generation prompt) and count its
 * tokens with the project's 4-characters-per-token rule. Nothing time- or request-dependent is rendered (no
 * dates, no ids), so a conversation that starts with the same system prompt always starts with the same
 * blocks.
 */
import { tokenCount } from '../state/block-hash';

export interface ChatMessage {
  readonly role: string;
  /** Plain text; callers flatten OpenAI content parts before rendering. */
  readonly content: string;
}

export interface ChatTemplateOptions {
  /** Append the assistant header the model continues from (default true, as servers do for a completion). */
  readonly addGenerationPrompt?: boolean;
}

export const BEGIN_OF_TEXT = '<|begin_of_text|>';
export const END_OF_TURN = '<|eot_id|>';

function header(role: string): string {
  return `<|start_header_id|>${role}<|end_header_id|>\n\n`;
}

/** Renders messages as one prompt string. */
export function chatTemplate(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): string {
  let text = BEGIN_OF_TEXT;
  for (const message of messages) text += header(message.role) + message.content + END_OF_TURN;
  if (options.addGenerationPrompt ?? true) text += header('assistant');
  return text;
}

/**
 * Characters of `chatTemplate(messages)` that the first `count` messages render to (begin-of-text marker
 * included): the part of the prompt those messages alone decide.
 */
export function chatTemplateHeadChars(messages: readonly ChatMessage[], count: number): number {
  let chars = BEGIN_OF_TEXT.length;
  for (let i = 0; i < count; i++)
    chars += header(messages[i].role).length + messages[i].content.length + END_OF_TURN.length;
  return chars;
}

/** Prompt tokens of a chat request: tokenCount of its rendered text. */
export function chatPromptTokens(messages: readonly ChatMessage[]): number {
  return tokenCount(chatTemplate(messages));
}
