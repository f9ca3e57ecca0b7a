import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledCli } from '../../compiled-dist';
import { ROUTER_PACKAGE_NAME, routerPackageVersion, versionText } from '../../../router/src/cli/package-version';

const ROOT = join(__dirname, '..', '..', '..');
const CLI = compiledCli();
const ROUTER_VERSION = (JSON.parse(readFileSync(join(ROOT, 'router', 'package.json'), 'utf8')) as { version: string })
  .version;

/** A folder tree holding `files` (path → JSON), for the package layouts the CLI runs from. */
function layout(files: Record<string, object>): string {
  const root = mkdtempSync(join(tmpdir(), 'version-'));
  for (const [path, json] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), JSON.stringify(json));
  }
  return root;
}

describe('prefix-router --version', () => {
  test.each(['--version', '-V'])(
    'GIVEN the checkout build WHEN run with %s THEN it prints the router package version and exits 0',
    (flag) => {
      const printed = execFileSync(process.execPath, [CLI, flag], { encoding: 'utf8', timeout: 30_000 });
      expect(printed).toBe(`${ROUTER_VERSION}\n`);
    },
  );

  test('GIVEN the checkout build WHEN run with --help THEN --version is listed', () => {
    expect(execFileSync(process.execPath, [CLI, '--help'], { encoding: 'utf8', timeout: 30_000 })).toMatch(
      /-V, --version +print the router package version/,
    );
  });

  describe('when the module runs from each layout', () => {
    test('GIVEN the installed package (node_modules/<router>/dist/router/src/cli) THEN the package.json beside dist/ is read', () => {
      const root = layout({ 'node_modules/r/package.json': { name: ROUTER_PACKAGE_NAME, version: '7.8.9' } });
      expect(routerPackageVersion(join(root, 'node_modules/r/dist/router/src/cli'))).toBe('7.8.9');
    });

    test('GIVEN a checkout build (dist/router/src/cli) THEN router/package.json is read, not the workspace root', () => {
      const root = layout({
        'package.json': { name: 'the-workspace', version: '0.0.1' },
        'router/package.json': { name: ROUTER_PACKAGE_NAME, version: '1.2.3' },
      });
      expect(routerPackageVersion(join(root, 'dist/router/src/cli'))).toBe('1.2.3');
    });

    test('GIVEN the sources (router/src/cli) THEN router/package.json is read', () => {
      expect(routerPackageVersion()).toBe(ROUTER_VERSION);
    });

    test('GIVEN only a package.json of another name (an image built from a checkout) THEN the version is unknown, saying where it looked', () => {
      const root = layout({ 'opt/package.json': { name: 'the-workspace', version: '0.0.1' } });
      const from = join(root, 'opt/dist/router/src/cli');
      expect(routerPackageVersion(from)).toBeUndefined();
      expect(versionText(from)).toBe(`unknown (no ${ROUTER_PACKAGE_NAME} package.json found from ${from})`);
    });
  });
});
