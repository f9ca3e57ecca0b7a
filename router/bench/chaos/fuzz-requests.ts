/**
 * Property-based fuzzer: fast-check generates malformed requests — broken, deeply nested or huge JSON, wrong
 * field types, invalid UTF-8, oversized bodies, header floods, absurd `max_tokens`, bad framing, raw garbage —
 * for every route (and paths that are none), sent as raw bytes on fresh TCP connections (`Connection: close`).
 *
 * Invariants: the router never crashes (it still answers /ping 200 at the end), never answers 5xx, and every
 * error answer is a JSON body whose `error.code` is documented in docs/errors.md; afterwards every load counter
 * is 0. HEAD is left out: its answers have no body by definition.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { request } from 'undici';
import { loadCounters, nonZero, startChaosStack } from './chaos-stack';

export interface FuzzOptions {
  readonly cases: number;
  readonly seed: number;
  readonly concurrency: number;
}

export interface FuzzCase {
  readonly label: string;
  readonly bytes: Buffer;
}

export interface FuzzResult {
  readonly cases: number;
  readonly byStatus: Record<string, number>;
  readonly byCode: Record<string, number>;
  readonly violations: string[];
}

/** Router limits for the fuzz run: small, so "oversized" and "too slow" are cheap to reach. */
export const FUZZ_LIMITS = { maxBodyBytes: 65_536, headersTimeoutMs: 500, bodyTimeoutMs: 300 };

const ROUTES = [
  '/v1/chat/completions',
  '/v1/completions',
  '/invocations',
  '/endpoints/ep/invocations',
  '/endpoints/ep/invocations-response-stream',
  '/endpoints/ep/openai/v1/chat/completions',
  '/v1/models',
  '/ping',
  '/health',
  '/metrics',
];

/** Error codes documented in docs/errors.md (the table's first column). */
export function documentedErrorCodes(): Set<string> {
  const docs = readFileSync(
    join(__dirname, '..', '..', '..', ...(__filename.endsWith('.ts') ? [] : ['..']), 'docs', 'errors.md'),
    'utf8',
  );
  return new Set([...docs.matchAll(/^\| `([a-z_]+)` \| \d{3} \|/gm)].map((m) => m[1]));
}

const jsonValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 20 }),
  fc.constant(1e308),
  fc.constant(-1),
  fc.constant(Number.MAX_SAFE_INTEGER),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);

const messagesValue = fc.oneof(
  jsonValue,
  fc.array(
    fc.record({
      role: jsonValue,
      content: fc.oneof(jsonValue, fc.array(fc.record({ type: jsonValue, text: jsonValue }), { maxLength: 3 })),
    }),
    { maxLength: 3 },
  ),
);

/** A JSON body: plausible request fields with wrong types and absurd values mixed in. */
const wrongTypedBody = fc
  .record(
    {
      model: jsonValue,
      messages: messagesValue,
      prompt: fc.oneof(jsonValue, fc.array(fc.integer(), { maxLength: 5 })),
      stream: jsonValue,
      max_tokens: fc.oneof(jsonValue, fc.constant(1e300), fc.constant(-999999999), fc.constant('a lot')),
      prompt_cache_key: jsonValue,
    },
    { requiredKeys: [] },
  )
  .map((o) => Buffer.from(JSON.stringify(o)));

const brokenJson = fc.oneof(
  fc.string({ maxLength: 200 }).map((s) => Buffer.from(s)),
  wrongTypedBody.chain((b) => fc.nat({ max: Math.max(0, b.length - 1) }).map((cut) => b.subarray(0, cut))),
  fc
    .constantFrom(
      '{',
      '}',
      '[]',
      '""',
      'null',
      '{"messages":',
      '{"messages":[{"role":"user","content":"\\ud800"}]}',
      '\u0000',
    )
    .map((s) => Buffer.from(s)),
);

const deeplyNested = fc
  .tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean())
  .map(([depth, inMessages]) =>
    Buffer.from(
      inMessages
        ? `{"messages":${'['.repeat(depth)}${']'.repeat(depth)}}`
        : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
    ),
  );

const invalidUtf8 = fc
  .uint8Array({ minLength: 1, maxLength: 8 })
  .map((bad) =>
    Buffer.concat([
      Buffer.from('{"messages":[{"role":"user","content":"'),
      Buffer.from([0xff, 0xfe, ...bad]),
      Buffer.from('"}]}'),
    ]),
  );

const oversized = fc
  .integer({ min: FUZZ_LIMITS.maxBodyBytes + 1, max: FUZZ_LIMITS.maxBodyBytes * 2 })
  .map((n) => Buffer.alloc(n, 0x61));

const body = fc.oneof(
  { weight: 4, arbitrary: wrongTypedBody },
  { weight: 3, arbitrary: brokenJson },
  { weight: 1, arbitrary: deeplyNested },
  { weight: 1, arbitrary: invalidUtf8 },
  { weight: 1, arbitrary: oversized },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
);

const headerValue = fc.string({ maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, ''));

const extraHeaders = fc.oneof(
  // Most requests declare JSON, so their bodies reach the parser (the OpenAI routes answer 415 to anything else).
  { weight: 5, arbitrary: fc.constant(['content-type: application/json']) },
  { weight: 1, arbitrary: fc.constant([] as string[]) },
  {
    weight: 4,
    arbitrary: fc.array(
      fc
        .tuple(
          fc.constantFrom(
            'content-type',
            'x-amzn-sagemaker-prefix-aware-id',
            'x-amzn-sagemaker-accept',
            'accept',
            'x-custom',
          ),
          headerValue,
        )
        .map(([k, v]) => `${k}: ${v}`),
      { maxLength: 4 },
    ),
  },
  // header floods: many headers, or one huge one (over Node's 16 KiB limit)
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 50, max: 3000 })
      .map((n) => Array.from({ length: n }, (_, i) => `x-flood-${i}: ${'v'.repeat(8)}`)),
  },
  { weight: 1, arbitrary: fc.integer({ min: 8_000, max: 40_000 }).map((n) => [`x-huge: ${'h'.repeat(n)}`]) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      ['x-amzn-sagemaker-prefix-aware-id: ' + 'a'.repeat(65)],
      ['x-amzn-sagemaker-prefix-aware-id: é'],
      ['content-type: text/plain'],
    ),
  },
);

type Framing = 'content-length' | 'chunked' | 'length-too-small' | 'length-too-large' | 'both' | 'bad-length';

const framing = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Framing>('content-length') },
  { weight: 2, arbitrary: fc.constant<Framing>('chunked') },
  { weight: 1, arbitrary: fc.constantFrom<Framing>('length-too-small', 'length-too-large', 'both', 'bad-length') },
);

const path = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ROUTES) },
  { weight: 1, arbitrary: fc.webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '/endpoints/bad_name!/invocations',
      '/v1/chat/completions?x=%zz',
      `/${'a'.repeat(9000)}`,
      '*',
      '/v1/../ping',
      '/endpoints//invocations',
    ),
  },
);

const method = fc.oneof(
  { weight: 6, arbitrary: fc.constant('POST') },
  { weight: 3, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS') },
  { weight: 1, arbitrary: fc.constantFrom('FOO', 'P0ST', 'GET ') },
);

function httpRequest(m: string, p: string, b: Buffer, headers: readonly string[], f: Framing): Buffer {
  const lines = [`${m} ${p} HTTP/1.1`, 'Host: fuzz', 'Connection: close', ...headers];
  let payload = b;
  if (f === 'content-length') lines.push(`Content-Length: ${b.length}`);
  else if (f === 'length-too-small') lines.push(`Content-Length: ${Math.floor(b.length / 2)}`);
  else if (f === 'length-too-large') lines.push(`Content-Length: ${b.length + 10}`);
  else if (f === 'bad-length') lines.push('Content-Length: 12abc');
  else {
    lines.push('Transfer-Encoding: chunked');
    if (f === 'both') lines.push(`Content-Length: ${b.length}`);
    payload = Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n0\r\n\r\n')]);
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  {
    weight: 19,
    arbitrary: fc.tuple(method, path, body, extraHeaders, framing).map(([m, p, b, h, f]) => ({
      label: `${m} ${p.slice(0, 60)} ${f} body ${b.length} B, ${h.length} extra headers`,
      bytes: httpRequest(m, p, b, h, f),
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 300 })
      .map((u) => ({ label: `raw garbage ${u.length} B`, bytes: Buffer.from(u) })),
  },
);

interface RawAnswer {
  readonly status?: number;
  readonly contentType?: string;
  readonly body?: string;
  readonly timedOut: boolean;
}

/** Sends raw bytes on a new connection and reads until the router closes it (bounded by `timeoutMs`). */
function sendRaw(port: number, bytes: Buffer, timeoutMs: number): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, timeoutMs);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ ...parseFirstResponse(Buffer.concat(chunks)), timedOut });
    });
    socket.write(bytes, () => undefined);
  });
}

function parseFirstResponse(raw: Buffer): Omit<RawAnswer, 'timedOut'> {
  const text = raw.toString('latin1');
  const headEnd = text.indexOf('\r\n\r\n');
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  if (m === null || headEnd === -1) return {};
  const head = text.slice(0, headEnd).toLowerCase();
  const contentType = /\r\ncontent-type: ([^\r\n]*)/.exec(head)?.[1];
  const length = /\r\ncontent-length: (\d+)/.exec(head)?.[1];
  const rest = raw.subarray(Buffer.byteLength(text.slice(0, headEnd + 4), 'latin1'));
  const body = (length !== undefined ? rest.subarray(0, Number(length)) : rest).toString('utf8');
  return { status: Number(m[1]), ...(contentType !== undefined ? { contentType } : {}), body };
}

export async function runFuzz(o: FuzzOptions): Promise<FuzzResult> {
  const codes = documentedErrorCodes();
  const stack = await startChaosStack(2, {}, { limits: FUZZ_LIMITS });
  const cases = fc.sample(fuzzCase, { numRuns: o.cases, seed: o.seed });
  const byStatus: Record<string, number> = {};
  const byCode: Record<string, number> = {};
  const violations: string[] = [];
  const violate = (c: FuzzCase, what: string): void => {
    if (violations.length < 20) violations.push(`${c.label}: ${what}`);
  };
  try {
    let next = 0;
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (next < cases.length) {
          const c = cases[next++];
          const answer = await sendRaw(stack.router.port, c.bytes, 10_000);
          const status = answer.status === undefined ? 'none' : String(answer.status);
          byStatus[status] = (byStatus[status] ?? 0) + 1;
          if (answer.status === undefined) {
            violate(c, answer.timedOut ? 'no answer within 10 s' : 'connection closed without an answer');
            continue;
          }
          if (answer.status >= 500) violate(c, `answered ${answer.status} ${answer.body?.slice(0, 200)}`);
          if (answer.status < 400) continue;
          let code: unknown;
          try {
            code = (JSON.parse(answer.body ?? '') as { error?: { code?: unknown } }).error?.code;
          } catch {
            violate(c, `${answer.status} with a body that is not JSON: ${JSON.stringify(answer.body?.slice(0, 100))}`);
            continue;
          }
          if (!answer.contentType?.startsWith('application/json'))
            violate(c, `${answer.status} with content-type ${answer.contentType}`);
          if (typeof code !== 'string' || !codes.has(code))
            violate(c, `${answer.status} with undocumented code ${String(code)}`);
          else byCode[code] = (byCode[code] ?? 0) + 1;
        }
      }),
    );
    const ping = await request(`${stack.router.url}/ping`);
    await ping.body.dump();
    if (ping.statusCode !== 200) violations.push(`router /ping answered ${ping.statusCode} after the fuzz run`);
    const left = nonZero(await loadCounters(stack.router));
    if (Object.keys(left).length > 0) violations.push(`load counters not 0: ${JSON.stringify(left)}`);
    return { cases: cases.length, byStatus, byCode, violations };
  } finally {
    await stack.close();
  }
}
