/**
 * The two published packages say where they come from: npm shows `repository`, `homepage` and `bugs` on the
 * package page and `npm repo` / `npm bugs` open them. All three name the one repository; each package's homepage
 * and `repository.directory` are its own folder.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

interface PackageMetadata {
  repository?: { type?: string; url?: string; directory?: string };
  homepage?: string;
  bugs?: { url?: string };
}

describe.each(['lib', 'router'])('when the %s package is published', (folder) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, folder, 'package.json'), 'utf8')) as PackageMetadata;
  const repo = /^https:\/\/github\.com\/([^/]+\/[^/.]+)\.git$/.exec(pkg.repository?.url ?? '')?.[1];

  it('THEN repository is a git URL with the package folder as its directory', () => {
    expect(repo).toBeDefined();
    expect(pkg.repository).toEqual({ type: 'git', url: `https://github.com/${repo}.git`, directory: folder });
  });

  it("THEN homepage is the package folder's readme and bugs the same repository's issues", () => {
    expect(pkg.homepage).toBe(`https://github.com/${repo}/tree/main/${folder}#readme`);
    expect(pkg.bugs).toEqual({ url: `https://github.com/${repo}/issues` });
  });
});
