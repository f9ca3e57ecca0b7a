import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `cdk-prefix-aware-llm-router/client` resolves the way Node and TypeScript resolve a subpath of an installed
 * package without an `exports` map: the router package's `client/` folder has a package.json pointing at the
 * compiled client (router/dist, built by the package's `build`). test/package/npm-pack.test.ts requires it from
 * the installed tarball.
 */
const ROUTER = join(__dirname, '..', '..', '..', 'router');

describe('when the router package subpath cdk-prefix-aware-llm-router/client is resolved', () => {
  const manifest = JSON.parse(readFileSync(join(ROUTER, 'client', 'package.json'), 'utf8')) as { main: string; types: string };

  it('GIVEN router/client/package.json THEN main and types point at the compiled client entry of the router build', () => {
    expect(manifest.main).toBe('../dist/router/src/aws/client.js');
    expect(manifest.types).toBe('../dist/router/src/aws/client.d.ts');
    expect(existsSync(join(ROUTER, 'src', 'aws', 'client.ts'))).toBe(true);
    const build = JSON.parse(readFileSync(join(ROUTER, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { outDir: string; rootDir: string } };
    expect(build.compilerOptions).toEqual(expect.objectContaining({ outDir: 'dist', rootDir: '..' }));
  });

  it('GIVEN the router package files THEN client/ ships, and the package has no exports map hiding the deep paths the docs use', () => {
    const pkg = JSON.parse(readFileSync(join(ROUTER, 'package.json'), 'utf8')) as { name: string; files: string[]; exports?: unknown };
    expect(pkg.name).toBe('cdk-prefix-aware-llm-router');
    expect(pkg.files).toContain('client');
    expect(pkg.exports).toBeUndefined();
  });
});
