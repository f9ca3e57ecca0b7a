import fc from 'fast-check';
import { blockHashes, tokenCount } from '../../../router/src/state/block-hash';
import { chatPromptTokens, chatTemplate } from '../../../router/src/emulator/chat-template';
import { outputText, outputToken } from '../../../router/src/emulator/output-text';

describe('chat template', () => {
  test('GIVEN a system and a user message THEN it renders Llama-3-style headers, end-of-turn markers and the generation prompt', () => {
    expect(
      chatTemplate([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ]),
    ).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
    expect(chatTemplate([{ role: 'user', content: 'Hi' }], { addGenerationPrompt: false }).endsWith('<|eot_id|>')).toBe(
      true,
    );
  });

  test('GIVEN the same system prompt THEN any two conversations share every block the system prompt covers', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 200, maxLength: 600 }), fc.string(), fc.string(), (system, u1, u2) => {
        const a = blockHashes(
          chatTemplate([
            { role: 'system', content: system },
            { role: 'user', content: u1 },
          ]),
        );
        const b = blockHashes(
          chatTemplate([
            { role: 'system', content: system },
            { role: 'user', content: u2 },
          ]),
        );
        const stableBlocks = Math.floor(
          ('<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n'.length + system.length) / 64,
        );
        expect(a.slice(0, stableBlocks)).toEqual(b.slice(0, stableBlocks));
      }),
    );
  });

  test('GIVEN a conversation THEN its prompt tokens are the token count of the rendered text', () => {
    const messages = [{ role: 'user', content: 'x'.repeat(101) }];
    expect(chatPromptTokens(messages)).toBe(tokenCount(chatTemplate(messages)));
  });
});

describe('output text', () => {
  test.each([0, 1, 17, 256])('GIVEN %i tokens THEN the filler text counts exactly that many tokens', (n) => {
    expect(tokenCount(outputText(n))).toBe(n);
    expect(outputText(n)).toHaveLength(n * 4);
  });

  test('GIVEN a range THEN it equals the concatenated per-token words', () => {
    let words = '';
    for (let i = 5; i < 40; i++) words += outputToken(i);
    expect(outputText(40, 5)).toBe(words);
    expect(outputText(40)).toBe(outputText(5) + outputText(40, 5));
  });
});
