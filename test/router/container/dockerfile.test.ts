import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { validate, ValidationSeverity } from 'dockerfile-utils';
import { dlcAccountFor } from '../../../lib/private/dlc-accounts';
import { VllmImage } from '../../../lib/vllm-image';
import { ROUTER_SIDECAR_BUILD_EXCLUDES } from '../../../lib/private/router-sidecar-context';

/**
 * router/Dockerfile: linted with dockerfile-utils (the Dockerfile validator of the VS Code Docker extension) and
 * checked for what the issue requires: the construct's DLC as pinned base, a pinned Node image stage, build and
 * runtime stages apart, port 8080, an exec-form entrypoint that accepts `serve`, and a context that works from
 * the npm package.
 */
const ROOT = join(__dirname, '..', '..', '..');
const DOCKERFILE = readFileSync(join(ROOT, 'router', 'Dockerfile'), 'utf8');
/** The router package: its exact runtime dependencies are what the image's build stage installs. */
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'router', 'package.json'), 'utf8')) as {
  files: string[];
  dependencies: Record<string, string>;
  engines: { node: string };
};
/** The construct package, which carries the staged build context (router/scripts/stage-sidecar-context.sh). */
const CONSTRUCT_PACKAGE = JSON.parse(readFileSync(join(ROOT, 'lib', 'package.json'), 'utf8')) as {
  files: string[];
  scripts: Record<string, string>;
  dependencies?: Record<string, string>;
};

interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly line: number;
}

/** Instructions with line continuations joined; comments and blank lines dropped. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i];
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    while (line.trimEnd().endsWith('\\') && i + 1 < lines.length)
      line = `${line.trimEnd().slice(0, -1)} ${lines[++i].trim()}`;
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (match) out.push({ keyword: match[1].toUpperCase(), args: match[2].trim(), line: start + 1 });
  }
  return out;
}

function stages(all: Instruction[]): Array<{ from: string; name?: string; body: Instruction[] }> {
  const result: Array<{ from: string; name?: string; body: Instruction[] }> = [];
  for (const ins of all) {
    if (ins.keyword === 'FROM') {
      const [image, as, name] = ins.args.split(/\s+/);
      result.push({ from: image, name: as?.toUpperCase() === 'AS' ? name : undefined, body: [] });
    } else if (result.length > 0) {
      result[result.length - 1].body.push(ins);
    }
  }
  return result;
}

const ALL = instructions(DOCKERFILE);
const STAGES = stages(ALL);
const argDefault = (name: string): string | undefined =>
  ALL.find((i) => i.keyword === 'ARG' && i.args.startsWith(`${name}=`))?.args.slice(name.length + 1);

describe('when router/Dockerfile is linted', () => {
  it('GIVEN dockerfile-utils with every optional rule as an error THEN it reports nothing', () => {
    const strict = ValidationSeverity.ERROR;
    const diagnostics = validate(DOCKERFILE, {
      deprecatedMaintainer: strict,
      directiveCasing: strict,
      emptyContinuationLine: strict,
      instructionCasing: strict,
      instructionCmdMultiple: strict,
      instructionEntrypointMultiple: strict,
      instructionHealthcheckMultiple: strict,
      instructionJSONInSingleQuotes: strict,
      instructionWorkdirRelative: strict,
    });
    expect(
      diagnostics.map(
        (d) => `line ${d.range.start.line + 1}: ${typeof d.message === 'string' ? d.message : d.message.value}`,
      ),
    ).toEqual([]);
  });

  it('GIVEN the linter THEN it does catch a broken Dockerfile (the check can fail)', () => {
    expect(validate('FROM x\nEXPOSE eighty\n').length).toBeGreaterThan(0);
  });
});

describe('when router/Dockerfile is read', () => {
  it("GIVEN its BASE_IMAGE default THEN it is the construct's default DLC image, pinned by tag", () => {
    const expected = `${dlcAccountFor('us-east-1')}.dkr.ecr.us-east-1.amazonaws.com/${VllmImage.DLC_REPOSITORY}:${VllmImage.DLC_DEFAULT_TAG}`;
    expect(argDefault('BASE_IMAGE')).toBe(expected);
  });

  it('GIVEN its Node image THEN it is an exact official version of an LTS line the package supports that is still maintained', () => {
    const node = argDefault('NODE_IMAGE');
    expect(node).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+(-slim)?$/);
    const major = Number(/^node:(\d+)\./.exec(node!)![1]);
    expect(major).toBeGreaterThanOrEqual(Number(/>=(\d+)/.exec(PACKAGE.engines.node)![1]));
    // End of life of each LTS line, from https://nodejs.org/en/about/previous-releases (even majors are the LTS lines).
    const endOfLife: Record<number, string> = { 20: '2026-04-30', 22: '2027-04-30', 24: '2028-04-30' };
    expect(Object.keys(endOfLife)).toContain(String(major));
    expect(new Date(endOfLife[major]).getTime()).toBeGreaterThan(Date.now());
  });

  it('GIVEN its stages THEN Node and the build run in their own stages and the runtime stage only copies their results onto the DLC', () => {
    expect(STAGES.map((s) => [s.from, s.name])).toEqual([
      ['${NODE_IMAGE}', 'node'],
      ['${NODE_IMAGE}', 'build'],
      ['${BASE_IMAGE}', undefined],
    ]);
    const build = STAGES[1].body;
    expect(build.filter((i) => i.keyword === 'RUN').map((i) => i.args)).toEqual([
      'sh router/image-build.sh && chmod 755 router/entrypoint.sh && npm cache clean --force',
    ]);
    const script = readFileSync(join(ROOT, 'router', 'image-build.sh'), 'utf8');
    expect(script).toContain('npm ci --omit=dev --omit=peer');
    // Dependencies only from a lock (the checkout's package-lock.json, the package's npm-shrinkwrap.json): never resolved afresh.
    expect(script).not.toContain('npm install');
    expect(script).toContain('[ ! -f package-lock.json ] && [ ! -f npm-shrinkwrap.json ]');
    expect(script).toContain('npx tsc -p router/tsconfig.container.json');
    execFileSync('sh', ['-n', join(ROOT, 'router', 'image-build.sh')]);
    const runtime = STAGES[2].body;
    // The DLC's own vLLM stays untouched: nothing is installed in the runtime stage; its one RUN only runs the copied
    // node (exec form, no shell), so a Node build the base's glibc cannot run fails the build, not the endpoint.
    const runs = runtime.filter((i) => i.keyword === 'RUN');
    expect(runs).toHaveLength(2);
    // The other RUN only adds the unprivileged user (passwd and group entries, its home): no package manager.
    expect(runs[1].args).toMatch(/^echo 'prefix-router:x:10001:10001:[^']*' >> \/etc\/passwd/);
    expect(runs[1].args).not.toMatch(/\b(dnf|yum|apt-get|apk|pip|npm|useradd)\b/);
    const check = JSON.parse(runs[0].args) as string[];
    expect(check.slice(0, 2)).toEqual(['/usr/local/bin/node', '-p']);
    expect(runtime.indexOf(runs[0])).toBe(
      runtime.findIndex((i) => i.keyword === 'COPY' && i.args.startsWith('--from=node /usr/local/bin/node ')) + 1,
    );
    const copies = runtime.filter((i) => i.keyword === 'COPY');
    for (const copy of copies) expect(copy.args).toMatch(/^--from=(node|build) /);
    expect(copies.some((c) => c.args.startsWith('--from=node /usr/local/bin/node '))).toBe(true);
    // The entrypoint's mode is set in the build stage (npm pack does not keep file modes), not with COPY --chmod.
    expect(copies.some((c) => c.args === '--from=build /src/router/entrypoint.sh ./entrypoint.sh')).toBe(true);
    expect(build.find((i) => i.keyword === 'RUN')?.args).toContain('chmod 755 router/entrypoint.sh');
  });

  it('GIVEN the whole file THEN it needs no frontend image and nothing the legacy builder lacks', () => {
    // A `# syntax=` directive makes BuildKit pull a frontend image from Docker Hub before building.
    expect(DOCKERFILE).not.toMatch(/^#\s*syntax\s*=/im);
    expect(DOCKERFILE).not.toMatch(/^#\s*check\s*=/im);
    for (const ins of ALL) {
      expect(ins.args).not.toMatch(
        /--(chmod|chown|link|mount|parents|exclude|keep-git-dir|checksum|network|security)\b/,
      );
      expect(ins.args).not.toMatch(/<<-?\s*["']?[A-Z]+/); // heredocs
    }
  });

  it('GIVEN its runtime user THEN the container runs as prefix-router (uid 10001), with its own home, set after every COPY and RUN', () => {
    const runtime = STAGES[2].body;
    const users = runtime.filter((i) => i.keyword === 'USER');
    expect(users.map((u) => u.args)).toEqual(['10001:10001']);
    const at = runtime.indexOf(users[0]);
    expect(runtime.slice(at).filter((i) => i.keyword === 'RUN' || i.keyword === 'COPY')).toEqual([]);
    const env = runtime
      .filter((i) => i.keyword === 'ENV')
      .map((i) => i.args)
      .join(' ');
    expect(env).toMatch(/HOME=\/home\/prefix-router/);
    expect(env).toMatch(/USER=prefix-router/);
    expect(runtime.find((i) => i.keyword === 'RUN' && i.args.includes('/etc/passwd'))?.args).toContain(
      'chown 10001:10001 /home/prefix-router',
    );
  });

  it('GIVEN the whole file THEN nothing is piped from the network into a shell', () => {
    expect(DOCKERFILE).not.toMatch(/(curl|wget)[^\n]*\|\s*(ba)?sh/);
  });

  it('GIVEN its port and entrypoint THEN it exposes 8080 and execs the supervisor in exec form, passing `serve` through', () => {
    expect(ALL.filter((i) => i.keyword === 'EXPOSE').map((i) => i.args)).toEqual(['8080']);
    const entrypoints = ALL.filter((i) => i.keyword === 'ENTRYPOINT');
    expect(entrypoints).toHaveLength(1);
    expect(JSON.parse(entrypoints[0].args)).toEqual(['/opt/prefix-router/entrypoint.sh']);
    expect(ALL.some((i) => i.keyword === 'CMD')).toBe(false);
    const script = readFileSync(join(ROOT, 'router', 'entrypoint.sh'), 'utf8');
    expect(script.startsWith('#!/bin/sh\n')).toBe(true);
    expect(script).toMatch(
      /^exec \/usr\/local\/bin\/node \/opt\/prefix-router\/dist\/bin\/prefix-router\.js container "\$@"$/m,
    );
    expect(statSync(join(ROOT, 'router', 'entrypoint.sh')).mode & 0o111).not.toBe(0);
    execFileSync('sh', ['-n', join(ROOT, 'router', 'entrypoint.sh')]);
  });
});

describe('when the build context is the installed npm package', () => {
  it('GIVEN the construct package THEN it carries the staged context (Dockerfile, build script, entrypoint, package.json, compiled dist/) and no router dependency', () => {
    expect(CONSTRUCT_PACKAGE.files).toContain('sidecar');
    expect(CONSTRUCT_PACKAGE.scripts.prepack).toContain('../router/scripts/stage-sidecar-context.sh sidecar');
    expect(CONSTRUCT_PACKAGE.scripts.postpack).toContain('rm -rf sidecar');
    expect(CONSTRUCT_PACKAGE.dependencies).toBeUndefined();
    const stage = readFileSync(join(ROOT, 'router', 'scripts', 'stage-sidecar-context.sh'), 'utf8');
    expect(stage).toContain(
      'cp "$root/router/Dockerfile" "$root/router/entrypoint.sh" "$root/router/image-build.sh" "$dest/router/"',
    );
    expect(stage).toContain('cp -R "$root/router/dist/bin" "$root/router/dist/router" "$dest/dist/"');
    expect(stage).not.toMatch(/router\/src"/); // hence the prebuilt dist/ branch
    // The shrinkwrap: the repository lock pruned offline, renamed, and checked against the lock entry by entry.
    expect(stage).toContain('npm install --package-lock-only --ignore-scripts --no-audit --no-fund --offline');
    expect(stage).toContain('mv "$dest/package-lock.json" "$dest/npm-shrinkwrap.json"');
  });

  it('GIVEN the modules the router imports THEN each is a runtime dependency or built in, so `--omit=dev` gives a working image', () => {
    const sources: string[] = [join(ROOT, 'bin', 'prefix-router.ts')];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) sources.push(path);
      }
    };
    walk(join(ROOT, 'router', 'src'));
    const external = new Set<string>();
    for (const file of sources) {
      for (const m of readFileSync(file, 'utf8').matchAll(
        /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^'.][^']*)'/g,
      )) {
        const name = m[1].startsWith('@') ? m[1].split('/').slice(0, 2).join('/') : m[1].split('/')[0];
        if (!name.startsWith('node:') && !builtinModules.includes(name)) external.add(name);
      }
    }
    expect(external.size).toBeGreaterThan(0);
    for (const name of external) expect(Object.keys(PACKAGE.dependencies)).toContain(name);
  });

  it('GIVEN the .dockerignore of a checkout THEN it excludes what the construct excludes from its asset', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('#'));
    expect(ignored.sort()).toEqual([...ROUTER_SIDECAR_BUILD_EXCLUDES, 'dist'].sort());
  });
});
