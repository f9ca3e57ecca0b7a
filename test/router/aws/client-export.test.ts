import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `cdk-prefix-aware-llm/client` resolves the way Node and TypeScript resolve a subpath of an installed package
 * without an `exports` map: the `client/` folder's package.json points at the compiled client. Deep paths such as
 * `cdk-prefix-aware-llm/dist/router/src/emulator` keep working because there is no `exports` map to restrict them.
 * Runs after the build (`npm test` compiles first).
 */
const ROOT = join(__dirname, '..', '..', '..');

describe('when the package subpath cdk-prefix-aware-llm/client is resolved', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'client', 'package.json'), 'utf8')) as { main: string; types: string };

  it('GIVEN client/package.json THEN main and types point at the compiled client entry', () => {
    expect(manifest.main).toBe('../dist/router/src/aws/client.js');
    expect(manifest.types).toBe('../dist/router/src/aws/client.d.ts');
    expect(existsSync(join(ROOT, 'router', 'src', 'aws', 'client.ts'))).toBe(true);
  });

  it('GIVEN the published files THEN client/ ships, and the package has no exports map hiding the deep paths the docs use', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[]; exports?: unknown };
    expect(pkg.files).toContain('client');
    expect(pkg.exports).toBeUndefined();
  });

  it('GIVEN the build output THEN requiring the folder loads the client classes', () => {
    const entry = join(ROOT, 'client', manifest.main);
    if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first (npm test does)`);
    const client = require(join(ROOT, 'client')) as Record<string, unknown>;
    expect(typeof client.PrefixAwareLlmClient).toBe('function');
    expect(typeof client.LlmThrottledError).toBe('function');
    expect(typeof client.createRuntimeClient).toBe('function');
  });
});
