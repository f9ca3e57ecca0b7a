import type { RequestTokenizer, WorthGoingOn } from '../kv-events/request-tokenizer';
import { PromptBlocks } from '../kv-events/prompt-blocks';
import type { EnginePrompt } from '../protocol/routing-request';
import { CHARS_PER_TOKEN } from '../state/block-hash';
import { chatTemplate } from './chat-template';
import { packedTokenId } from './emulator-tokens';

/** Placeholder for a prompt's last, shorter token: never part of a hit (the engine recomputes the last token). */
const LAST_PARTIAL_TOKEN = -1;

/**
 * The emulator's own tokens for a request (`prefix-router serve --tokenizer emulator`), so a router follows the
 * events of emulators (`prefix-router emulate`): the chat rendered with the emulator's template (text parts joined
 * as it joins them, the generation prompt always: the emulator ignores add_generation_prompt), then 4 characters a token, ids packed as every emulator packs them (packedTokenId). A chunk
 * with a non-ASCII character has an id only its emulator knows: the known prompt ends before it. No batches, no
 * token-id prompts (the emulator refuses both).
 */
export class EmulatorRequestTokenizer implements RequestTokenizer {
  readonly description = 'emulator';

  promptBlocksOf(prompt: EnginePrompt, _worthGoingOn?: WorthGoingOn): PromptBlocks | undefined {
    if (prompt.kind === 'token-ids') return undefined;
    const text =
      prompt.kind === 'text'
        ? prompt.text
        : chatTemplate(
            prompt.messages.map((m) => ({
              role: m.role,
              content: typeof m.content === 'string' ? m.content : m.content.join(''),
            })),
          );
    const fullTokens = Math.floor(text.length / CHARS_PER_TOKEN);
    const ids: number[] = [];
    for (let t = 0; t < fullTokens; t++) {
      const id = packedTokenId(text.slice(t * CHARS_PER_TOKEN, (t + 1) * CHARS_PER_TOKEN));
      if (id === undefined) return new PromptBlocks(ids, false);
      ids.push(id);
    }
    if (text.length % CHARS_PER_TOKEN !== 0) ids.push(LAST_PARTIAL_TOKEN);
    return new PromptBlocks(ids, true);
  }
}
