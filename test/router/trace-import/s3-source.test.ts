/**
 * s3://bucket/prefix inputs through the real @aws-sdk/client-s3 (its commands, serialization of inputs, and our
 * paging and retries) against aws-sdk-client-mock: pages of ListObjectsV2, throttled List and Get calls.
 */
import { Readable } from 'node:stream';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client, type ListObjectsV2CommandInput } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import type { Clock } from '../../../router/src/aws/throttling-retry';
import { captureFileKey, importTrace } from '../../../router/src/trace-import';
import { S3_PREFETCH } from '../../../router/src/trace-import/import-sources';

const instantClock: Clock = { now: () => 0, sleep: async () => undefined, random: () => 0.5 };

const at = (s: number) => Date.UTC(2026, 0, 1, 13) + s * 1000;

function line(s: number, user: string): string {
  const body = JSON.stringify({
    model: 'm',
    messages: [{ role: 'user', content: `${'Shared instructions for every ticket. '.repeat(20)}${user}` }],
    max_tokens: 16,
  });
  return JSON.stringify({
    captureData: {
      endpointInput: {
        observedContentType: 'application/json',
        mode: 'INPUT',
        data: Buffer.from(body).toString('base64'),
        encoding: 'BASE64',
      },
    },
    eventMetadata: { eventId: `id-${s}`, inferenceTime: new Date(at(s)).toISOString() },
    eventVersion: '0',
  });
}

function throttled(name: string): Error {
  return Object.assign(new Error('Please reduce your request rate.'), { name, $metadata: { httpStatusCode: 503 } });
}

describe('when the input is an S3 prefix of Data Capture files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'trace-s3-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('GIVEN 5 objects over 3 ListObjectsV2 pages, a throttled List and a throttled Get THEN every object is read in key order and both calls are retried', async () => {
    const s3 = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    const mock = mockClient(s3);
    const keys = [0, 60, 120, 180, 240].map(
      (s, i) =>
        `datacapture/${captureFileKey('my-llm', 'AllTraffic', at(s), `0000000${i}-0000-4000-a000-000000000000`)}`,
    );
    const pages = [keys.slice(0, 2), keys.slice(2, 4), keys.slice(4)];
    const listInputs: ListObjectsV2CommandInput[] = [];
    let listCalls = 0;
    mock.on(ListObjectsV2Command).callsFake(async (input: ListObjectsV2CommandInput) => {
      listInputs.push(input);
      if (listCalls++ === 1) throw throttled('SlowDown');
      const page = input.ContinuationToken === undefined ? 0 : Number(input.ContinuationToken);
      const next = page + 1 < pages.length ? String(page + 1) : undefined;
      return {
        Contents: [...pages[page].map((Key) => ({ Key })), ...(page === 0 ? [{ Key: 'datacapture/my-llm/' }] : [])],
        IsTruncated: next !== undefined,
        NextContinuationToken: next,
      };
    });
    let getCalls = 0;
    const gotKeys: string[] = [];
    mock.on(GetObjectCommand).callsFake(async (input: { Bucket: string; Key: string }) => {
      if (getCalls++ === 2) throw throttled('ThrottlingException');
      gotKeys.push(input.Key);
      const i = keys.indexOf(input.Key);
      return {
        Body: Readable.from([Buffer.from(`${line(i * 60, `question ${i}`)}\n${line(i * 60 + 1, `follow-up ${i}`)}\n`)]),
      };
    });
    const throttles: string[] = [];
    const out = join(dir, 'trace.jsonl');
    const report = await importTrace({
      inputs: ['s3://capture-bucket/datacapture/'],
      out,
      blockTokens: 16,
      sources: { s3, clock: instantClock, onThrottled: (what) => throttles.push(what) },
    });

    expect(listInputs.map((i) => [i.Bucket, i.Prefix, i.ContinuationToken])).toEqual([
      ['capture-bucket', 'datacapture/', undefined],
      ['capture-bucket', 'datacapture/', '1'],
      ['capture-bucket', 'datacapture/', '1'],
      ['capture-bucket', 'datacapture/', '2'],
    ]);
    // Gets run ahead of the reading (the throttled one is retried after later ones), the files are read in key order.
    expect([...gotKeys].sort()).toEqual(keys);
    expect(throttles).toEqual(['ListObjectsV2', 'GetObject']);
    expect(report.sources).toBe(5);
    expect(report.requests).toBe(10);
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.timestamp)).toEqual([0, 1, 60, 61, 120, 121, 180, 181, 240, 241].map((s) => s * 1000));
    // All share the instructions' first block.
    expect(new Set(rows.map((r) => r.hash_ids[0])).size).toBe(1);
    mock.restore();
  });

  test('GIVEN 20 objects whose Gets each take a while THEN up to S3_PREFETCH + 1 are in flight at once, and the trace is in key order', async () => {
    const s3 = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    const mock = mockClient(s3);
    const keys = Array.from({ length: 20 }, (_, i) => `p/${String(i).padStart(2, '0')}.jsonl`);
    mock.on(ListObjectsV2Command).resolves({ Contents: keys.map((Key) => ({ Key })), IsTruncated: false });
    let inFlight = 0;
    let peak = 0;
    mock.on(GetObjectCommand).callsFake(async (input: { Key: string }) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      const i = keys.indexOf(input.Key);
      return { Body: Readable.from([Buffer.from(`${line(i, `q${i}`)}\n`)]) };
    });
    const out = join(dir, 't.jsonl');
    const report = await importTrace({ inputs: ['s3://bucket/p/'], out, sources: { s3, clock: instantClock } });
    expect(report.requests).toBe(20);
    expect(peak).toBe(S3_PREFETCH + 1);
    expect(
      readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).timestamp),
    ).toEqual(keys.map((_, i) => i * 1000));
    mock.restore();
  });

  test('GIVEN a Get that keeps failing with AccessDenied THEN that object is listed as unreadable and the others are imported', async () => {
    const s3 = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
    const mock = mockClient(s3);
    mock
      .on(ListObjectsV2Command)
      .resolves({ Contents: [{ Key: 'p/a.jsonl' }, { Key: 'p/b.jsonl' }], IsTruncated: false });
    mock
      .on(GetObjectCommand, { Key: 'p/a.jsonl' })
      .rejects(Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
    mock
      .on(GetObjectCommand, { Key: 'p/b.jsonl' })
      .callsFake(async () => ({ Body: Readable.from([Buffer.from(`${line(0, 'x')}\n`)]) }));
    const report = await importTrace({
      inputs: ['s3://bucket/p/'],
      out: join(dir, 't.jsonl'),
      sources: { s3, clock: instantClock },
    });
    expect(report.requests).toBe(1);
    expect(report.problems).toEqual([
      {
        source: 's3://bucket/p/a.jsonl',
        lineNumber: 0,
        kind: 'unreadable-source',
        message: 'cannot read it: Access Denied',
      },
    ]);
    mock.restore();
  });
});
