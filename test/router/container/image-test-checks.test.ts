import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { emfProblems } from '../../../router/bench/image-test';
import { emfDocuments } from '../../../router/src/container';

/**
 * The parts of `npm run test:image` that run without Docker: its EMF check (per CloudWatch's Embedded Metric Format
 * specification) accepts what the container writes and rejects what CloudWatch would drop, and CI runs it.
 */
const ROOT = join(__dirname, '..', '..', '..');

describe("when test:image's EMF check reads a document", () => {
  const written = emfDocuments({
    timestampMs: 1_764_000_000_000,
    namespace: 'PrefixRouter',
    endpointName: 'ep',
    decisionsByReason: new Map([['prefix-affinity', 3]]),
    ttftMs: Array.from({ length: 150 }, (_, i) => ({ value: i + 1, count: 1 })),
    engines: [{ engine: 'engine-0', promptTokens: 10, predictedCachedTokens: 0, reportedCachedTokens: 4 }],
  });

  it('GIVEN every document the container writes (values split at 100) THEN it finds no problem', () => {
    expect(written.length).toBeGreaterThanOrEqual(4);
    expect(written.flatMap((d) => emfProblems(d))).toEqual([]);
  });

  it.each([
    ['no _aws', { EndpointName: 'ep', X: 1 }, 'no _aws object'],
    [
      'a fractional timestamp',
      {
        _aws: { Timestamp: 1.5, CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [[]], Metrics: [{ Name: 'X' }] }] },
        X: 1,
      },
      '_aws.Timestamp is not a positive integer',
    ],
    [
      'a dimension that is not a string member',
      {
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [['Engine']], Metrics: [{ Name: 'X' }] }],
        },
        X: 1,
      },
      'dimension Engine is not a string member',
    ],
    [
      'a metric without a value',
      { _aws: { Timestamp: 1, CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [[]], Metrics: [{ Name: 'X' }] }] } },
      'metric X has no numeric value (or more than 100)',
    ],
    [
      '101 values',
      {
        _aws: { Timestamp: 1, CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [[]], Metrics: [{ Name: 'X' }] }] },
        X: Array(101).fill(1),
      },
      'metric X has no numeric value (or more than 100)',
    ],
    [
      'an unknown unit',
      {
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [[]], Metrics: [{ Name: 'X', Unit: 'Tokens' }] }],
        },
        X: 1,
      },
      'metric X has unit "Tokens"',
    ],
    [
      'a 256-character namespace',
      {
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [{ Namespace: 'N'.repeat(256), Dimensions: [[]], Metrics: [{ Name: 'X' }] }],
        },
        X: 1,
      },
      `bad Namespace ${'N'.repeat(256)}`,
    ],
  ])('GIVEN %s THEN it reports it', (_what, doc, problem) => {
    expect(emfProblems(doc as Record<string, unknown>)).toContain(problem);
  });

  it('GIVEN exactly 100 values and a 255-character namespace THEN both are accepted', () => {
    expect(
      emfProblems({
        _aws: {
          Timestamp: 1,
          CloudWatchMetrics: [{ Namespace: 'N'.repeat(255), Dimensions: [[]], Metrics: [{ Name: 'X' }] }],
        },
        X: Array(100).fill(1),
      }),
    ).toEqual([]);
  });
});

describe('when CI runs', () => {
  it('GIVEN .ci/run THEN it runs npm run test:image after npm test, and the script it names is valid bash', () => {
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8').split('\n');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(ci.indexOf('npm run test:image')).toBeGreaterThan(ci.indexOf('npm test'));
    expect(pkg.scripts['test:image']).toBe('bash router/scripts/test-image.sh');
    execFileSync('bash', ['-n', join(ROOT, 'router', 'scripts', 'test-image.sh')]);
  });
});
