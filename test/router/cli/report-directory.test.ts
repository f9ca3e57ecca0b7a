/**
 * Where reports go without `--out`: ./prefix-router-reports/<command>-<UTC time>, a folder named for the tool, so a
 * run from a project's root (a CDK app) does not write into a `reports/` of the project's own.
 */
import { mkdtempSync, readdirSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { defaultReportDir, REPORTS_DIRECTORY } from '../../../router/src/cli/flag-values';
import { runSimulateCommand } from '../../../router/src/cli/simulate-command';

describe('when a command is given no --out', () => {
  test('GIVEN a time WHEN the default directory is made THEN it is prefix-router-reports/<command>-<UTC time> and sorts by time', () => {
    expect(REPORTS_DIRECTORY).toBe('prefix-router-reports');
    expect(defaultReportDir('simulate', new Date('2026-12-02T01:02:03.456Z'))).toBe(
      'prefix-router-reports/simulate-2026-12-02T01-02-03Z',
    );
    expect(
      defaultReportDir('plan', new Date('2026-12-02T09:00:00Z')) <
        defaultReportDir('plan', new Date('2026-12-02T10:00:00Z')),
    ).toBe(true);
  });

  test('GIVEN a project directory WHEN simulate runs there without --out THEN its report is under ./prefix-router-reports/ and nothing else is written', async () => {
    const project = realpathSync(mkdtempSync(join(tmpdir(), 'report-directory-')));
    const cwd = process.cwd();
    process.chdir(project);
    try {
      const { files } = await runSimulateCommand(
        {
          workload: 'long-context?groups=2&prefixTokens=100&suffixTokens=10&outputTokens=2&count=8',
          instances: '2',
          profile: 'tiny',
          policy: ['random'],
        },
        () => undefined,
        () => undefined,
      );
      expect(relative(project, realpathSync(files.json))).toMatch(
        /^prefix-router-reports\/simulate-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\/report\.json$/,
      );
      expect(readdirSync(project)).toEqual(['prefix-router-reports']);
    } finally {
      process.chdir(cwd);
    }
  });
});
