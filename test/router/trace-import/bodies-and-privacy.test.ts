/**
 * What `trace import` reads from each kind of body, how it counts tokens and output lengths, and what it never
 * writes: prompt text.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Tokenizer } from '@huggingface/tokenizers';
import { formatImportSummary, importTrace, loadTokenizer } from '../../../router/src/trace-import';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trace-bodies-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const at = (s: number) => new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString();

function capture(
  lines: Array<{
    t: number;
    type?: string;
    data: string;
    encoding?: string;
    output?: { type?: string; data: string; encoding?: string };
  }>,
): string {
  const file = join(dir, 'capture.jsonl');
  writeFileSync(
    file,
    lines
      .map(({ t, type, data, encoding, output }) =>
        JSON.stringify({
          captureData: {
            endpointInput: {
              observedContentType: type ?? 'application/json',
              mode: 'INPUT',
              data,
              encoding: encoding ?? 'JSON',
            },
            ...(output
              ? {
                  endpointOutput: {
                    observedContentType: output.type ?? 'application/json',
                    mode: 'OUTPUT',
                    data: output.data,
                    encoding: output.encoding ?? 'JSON',
                  },
                }
              : {}),
          },
          eventMetadata: { eventId: `e${t}`, inferenceTime: at(t) },
          eventVersion: '0',
        }),
      )
      .join('\n') + '\n',
  );
  return file;
}

async function rows(file: string, options: Partial<Parameters<typeof importTrace>[0]> = {}) {
  const out = join(dir, 'out.jsonl');
  const report = await importTrace({ inputs: [file], out, blockTokens: 16, ...options });
  return {
    report,
    rows: readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) => JSON.parse(l) as { timestamp: number; input_length: number; output_length: number; hash_ids: number[] },
      ),
  };
}

const SYSTEM = 'You answer questions about invoices. Be brief and exact. '.repeat(4); // 228 chars
const chatBody = (user: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    model: 'm',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: user },
    ],
    max_tokens: 50,
    ...extra,
  });

describe('when captured bodies are of each kind', () => {
  test("GIVEN chat, completion, native (inputs) and text/plain bodies THEN each counts the router's routing text at 4 characters a token, in 64-character blocks", async () => {
    const { report, rows: r } = await rows(
      capture([
        { t: 0, data: chatBody('What is due?') },
        { t: 1, data: JSON.stringify({ model: 'm', prompt: `${SYSTEM}What is due?`, max_tokens: 7 }) },
        { t: 2, data: JSON.stringify({ inputs: `${SYSTEM}Hi`, parameters: { max_new_tokens: 9 } }) },
        { t: 3, type: 'text/plain', data: Buffer.from(`${SYSTEM}Plain`).toString('base64'), encoding: 'BASE64' },
      ]),
    );
    expect(report.kinds).toEqual({ chat: 1, completions: 1, native: 1, text: 1 });
    const chatChars = SYSTEM.length + 'What is due?'.length;
    const nativeChars = JSON.stringify({ inputs: `${SYSTEM}Hi`, parameters: { max_new_tokens: 9 } }).length;
    expect(r.map((x) => x.input_length)).toEqual([
      Math.ceil(chatChars / 4),
      Math.ceil(chatChars / 4),
      Math.ceil(nativeChars / 4),
      Math.ceil((SYSTEM.length + 5) / 4),
    ]);
    expect(r.map((x) => x.output_length)).toEqual([50, 7, 9, 128]);
    // Chat and completion route the same text (messages in order vs the prompt): the same blocks.
    expect(r[1].hash_ids).toEqual(r[0].hash_ids);
    // The native body is keyed on its bytes, as the router keys it: it starts with '{"inputs":"', shares nothing.
    expect(r[2].hash_ids[0]).not.toBe(r[0].hash_ids[0]);
    expect(report.outputTokens.sources).toEqual({ usage: 0, 'generated-text': 0, 'max-tokens': 3, default: 1 });
    expect(report.notes.join(' ')).toContain("router's estimate");
  });

  test('GIVEN a CSV-encoded capture (text/csv, listed in CsvContentTypes) THEN its text is the prompt, keyed on its bytes as the router keys it', async () => {
    const csv = `${SYSTEM},question,42`;
    const { report, rows: r } = await rows(
      capture([
        { t: 0, type: 'text/csv', data: csv, encoding: 'CSV' },
        { t: 1, type: 'text/csv', data: csv, encoding: 'CSV' },
      ]),
    );
    expect(report.kinds.text).toBe(2);
    expect(r[0].input_length).toBe(Math.ceil(Buffer.byteLength(csv) / 4));
    expect(r[1].hash_ids).toEqual(r[0].hash_ids);
  });

  test('GIVEN responses with usage, an SSE stream with a usage chunk, TGI details and bare generated text THEN each gives the output length, counted by source', async () => {
    const { report, rows: r } = await rows(
      capture([
        {
          t: 0,
          data: chatBody('a'),
          output: {
            data: JSON.stringify({ choices: [{ message: { content: 'x' } }], usage: { completion_tokens: 33 } }),
          },
        },
        {
          t: 1,
          data: chatBody('b'),
          output: {
            type: 'text/event-stream',
            data: 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: {"choices":[],"usage":{"completion_tokens":21}}\n\ndata: [DONE]\n\n',
          },
        },
        {
          t: 2,
          data: chatBody('c'),
          output: { data: JSON.stringify([{ generated_text: 'zz', details: { generated_tokens: 12 } }]) },
        },
        { t: 3, data: chatBody('d'), output: { data: JSON.stringify({ generated_text: 'twelve chars' }) } },
        { t: 4, data: chatBody('e'), output: { data: 'not base64!', encoding: 'BASE64' } },
      ]),
    );
    expect(r.map((x) => x.output_length)).toEqual([33, 21, 12, 3, 50]);
    expect(report.outputTokens.sources).toEqual({ usage: 3, 'generated-text': 1, 'max-tokens': 1, default: 0 });
  });

  test('GIVEN prompt_cache_key in bodies and PrefixAwareId headers in a request log THEN tenants never share blocks, and are counted', async () => {
    const log = join(dir, 'log.jsonl');
    const body = { model: 'm', messages: [{ role: 'user', content: SYSTEM }] };
    writeFileSync(
      log,
      [
        { timestamp: 1767225600, url: '/v1/chat/completions', body },
        { timestamp: 1767225601, url: '/v1/chat/completions', body: { ...body, prompt_cache_key: 'tenant-a' } },
        {
          timestamp: 1767225602000,
          url: '/v1/chat/completions',
          body,
          headers: { 'X-Amzn-SageMaker-Prefix-Aware-Id': 'tenant-a' },
        },
        { timestamp: '2026-01-01T00:00:03Z', body },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    const { report, rows: r } = await rows(log);
    expect(report.tenants).toBe(1);
    expect(r.map((x) => x.timestamp)).toEqual([0, 1000, 2000, 3000]);
    expect(r[1].hash_ids[0]).not.toBe(r[0].hash_ids[0]);
    expect(r[2].hash_ids).toEqual(r[1].hash_ids);
    expect(r[3].hash_ids).toEqual(r[0].hash_ids);
  });

  test('GIVEN a sampling percentage below 100 THEN the summary says the ceilings are lower bounds and gives the speedup that restores the rate', async () => {
    const { report } = await rows(
      capture([
        { t: 0, data: chatBody('a') },
        { t: 10, data: chatBody('b') },
      ]),
      { samplingPercent: 20 },
    );
    expect(formatImportSummary(report)).toContain('Data Capture sampled 20 % of requests');
    expect(formatImportSummary(report)).toContain('speedup=5');
  });
});

/** A byte-level BPE tokenizer.json (GPT-2's format): 256 byte tokens and a few merges. */
function byteLevelTokenizerJson(merges: Array<[string, string]>): object {
  const bytes: number[] = [];
  for (let b = 33; b <= 126; b++) bytes.push(b);
  for (let b = 161; b <= 172; b++) bytes.push(b);
  for (let b = 174; b <= 255; b++) bytes.push(b);
  const chars = [...bytes];
  let n = 0;
  for (let b = 0; b < 256; b++)
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + n++);
    }
  const vocab: Record<string, number> = {};
  bytes.forEach((b, i) => (vocab[String.fromCharCode(chars[i])] = b));
  let id = 256;
  for (const [a, b] of merges) vocab[a + b] = id++;
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel' },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: merges.map((m) => m.join(' ')),
    },
  };
}

describe('when a tokenizer.json is given', () => {
  test('GIVEN a byte-level BPE tokenizer THEN prompt lengths are its token counts, blocks are cut in its tokens, and the summary names it', async () => {
    const json = byteLevelTokenizerJson([
      ['i', 'n'],
      ['Ġ', 'a'],
      ['o', 'u'],
      ['e', 's'],
      ['i', 'c'],
      ['o', 'n'],
    ]);
    const path = join(dir, 'tokenizer.json');
    writeFileSync(path, JSON.stringify(json));
    const reference = new Tokenizer(json, {});
    const { report, rows: r } = await rows(capture([{ t: 0, data: chatBody('Invoices, naïve café — 日本 😀') }]), {
      tokenizer: loadTokenizer(path),
    });
    const tokens = reference.encode(`${SYSTEM}Invoices, naïve café — 日本 😀`, { add_special_tokens: false }).ids
      .length;
    expect(r[0].input_length).toBe(tokens);
    expect(tokens).not.toBe(Math.ceil((SYSTEM.length + 27) / 4));
    expect(r[0].hash_ids).toHaveLength(Math.ceil(tokens / 16));
    expect(report.tokenSource).toBe(`tokenizer ${path}`);
    expect(report.notes.join(' ')).not.toContain("router's estimate");
  });

  test('GIVEN a file that is not a tokenizer THEN loading fails naming --tokenizer and the file', () => {
    const path = join(dir, 'nope.json');
    writeFileSync(path, '{');
    expect(() => loadTokenizer(path)).toThrow(`--tokenizer ${path}: not a JSON tokenizer file`);
    expect(() => loadTokenizer(join(dir, 'missing.json'))).toThrow('cannot read it (ENOENT)');
  });
});

describe('when the trace and summary are checked for prompt text', () => {
  test('GIVEN random prompts sharing random prefixes THEN no 8-character substring of any prompt appears in the trace or the summary', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ minLength: 8, maxLength: 300, unit: 'grapheme' }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fc.nat(3), fc.string({ minLength: 0, maxLength: 200 })), { minLength: 1, maxLength: 12 }),
        async (heads, requests) => {
          const prompts = requests.map(([h, tail]) => heads[h % heads.length] + tail);
          const file = capture(
            prompts.map((p, i) => ({
              t: i,
              data: JSON.stringify({
                model: 'm',
                messages: [{ role: 'user', content: p }],
                prompt_cache_key: p.slice(0, 20) || undefined,
              }),
            })),
          );
          const out = join(dir, 'out.jsonl');
          const report = await importTrace({ inputs: [file], out, blockTokens: 16 });
          const written = readFileSync(out, 'utf8') + formatImportSummary(report);
          for (const p of prompts) {
            for (let i = 0; i + 8 <= p.length; i++) {
              const piece = p.slice(i, i + 8);
              if (/^[\d,[\]{}":_ ]+$/.test(piece)) continue; // digits and JSON punctuation only: what any trace is made of
              expect({ piece, found: written.includes(piece) }).toEqual({ piece, found: false });
            }
          }
        },
      ),
      { numRuns: 40, seed: 26 },
    );
  });

  test('GIVEN two sets of prompts with the same sharing THEN the traces are identical: the output is a function of the sharing, lengths and times alone', async () => {
    const make = (words: string) =>
      capture(
        [0, 1, 2].map((t) => ({
          t,
          data: JSON.stringify({
            model: 'm',
            messages: [{ role: 'user', content: words.repeat(30) + (t === 2 ? words : '') }],
          }),
        })),
      );
    const a = await rows(make('alpha beta gamma '));
    const first = JSON.stringify(a.rows);
    const b = await rows(make('delta omega sigma'));
    expect(JSON.stringify(b.rows)).toBe(first);
  });
});
