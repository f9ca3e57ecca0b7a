import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSimulateCommand } from '../../../router/src/cli/simulate-command';
import { buildReport, renderHtml } from '../../../router/src/report';
import type { RequestRecord } from '../../../router/src/report/request-record';
import { parseWorkloadSpec } from '../../../router/src/workload';
import { parseTraceLine } from '../../../router/src/workload/mooncake-trace';

const rec = (
  id: string,
  priority: number | undefined,
  ttftMs: number,
  cached: number,
  error?: string,
): RequestRecord => ({
  id,
  instance: 'a',
  sentAtMs: 0,
  ttftMs: error ? null : ttftMs,
  e2eMs: 500,
  ...(error ? { error } : { promptTokens: 100, cachedPromptTokens: cached, outputTokens: 4 }),
  ...(priority !== undefined ? { priority } : {}),
});

describe('TTFT by priority class (report.json strategies[].byPriority)', () => {
  describe('when records carry priorities', () => {
    const report = buildReport({
      mode: 'simulated',
      workload: parseWorkloadSpec('long-context?count=5'),
      runs: [
        {
          strategy: { name: 'cache-aware' },
          instances: ['a'],
          records: [
            rec('1', 1, 300, 0),
            rec('2', 0, 100, 50),
            rec('3', 1, 500, 100),
            rec('4', 0, 200, 0),
            rec('5', 1, 0, 0, 'http_429:flow_control'),
          ],
        },
        { strategy: { name: 'random' }, instances: ['a'], records: [rec('1', undefined, 100, 0)] },
      ],
    });

    test('GIVEN two classes THEN each has its counts, TTFT distribution and hit rate, most urgent first', () => {
      const classes = report.strategies[0].byPriority!;
      expect(Object.keys(classes)).toEqual(['0', '1']);
      expect(classes['0']).toMatchObject({ requests: 2, succeeded: 2, errors: 0, cacheHitRate: 0.25 });
      expect(classes['0'].ttftMs).toMatchObject({ count: 2, p50: 150, max: 200 });
      expect(classes['1']).toMatchObject({ requests: 3, succeeded: 2, errors: 1, cacheHitRate: 0.5 });
      expect(classes['1'].ttftMs).toMatchObject({ count: 2, min: 300, max: 500 });
    });

    test('GIVEN a strategy whose requests have no class THEN it has no byPriority', () => {
      expect(report.strategies[1]).not.toHaveProperty('byPriority');
    });

    test('GIVEN the HTML page THEN it draws one TTFT CDF per class', () => {
      const html = renderHtml(report);
      expect(html).toContain('TTFT CDF, priority 0');
      expect(html).toContain('TTFT CDF, priority 1');
    });
  });

  describe('when a trace line carries "priority"', () => {
    const line = (extra: string) =>
      `{"timestamp": 0, "input_length": 20, "output_length": 2, "hash_ids": [0, 1]${extra}}`;

    test('GIVEN an integer THEN the entry keeps it; GIVEN none THEN the entry has no priority', () => {
      expect(parseTraceLine(line(', "priority": -2'), 1, 16, 0)).toMatchObject({ priority: -2 });
      expect(parseTraceLine(line(''), 1, 16, 0)).not.toHaveProperty('priority');
    });

    test('GIVEN a non-integer THEN the line is refused naming the field', () => {
      expect(parseTraceLine(line(', "priority": 0.5'), 1, 16, 0)).toEqual({
        lineNumber: 1,
        message: 'priority must be an integer (got 0.5)',
      });
    });

    test('GIVEN a simulated trace with classes THEN report.json has byPriority per strategy', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'priority-trace-'));
      const trace = join(dir, 'classes.jsonl');
      const lines = Array.from(
        { length: 20 },
        (_, i) =>
          `{"timestamp": ${i * 5}, "input_length": 600, "output_length": 4, "hash_ids": [900, ${i}], "priority": ${i % 5 === 0 ? 0 : 1}}`,
      );
      writeFileSync(trace, lines.join('\n') + '\n');
      const { files } = await runSimulateCommand(
        {
          workload: `trace:${trace}`,
          instances: '2',
          profile: 'tiny',
          policy: ['random'],
          out: dir,
          jobs: '1',
          engineArg: ['scheduling-policy=priority'],
        },
        () => undefined,
        () => undefined,
      );
      const json = JSON.parse(readFileSync(files.json, 'utf8'));
      expect(json.strategies[0].byPriority['0'].requests).toBe(4);
      expect(json.strategies[0].byPriority['1'].requests).toBe(16);
    });
  });
});
