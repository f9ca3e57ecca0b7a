/**
 * The router sidecar's settings are checked at synth by the router's own start-up validation
 * (router/src/container/container-config.ts), loaded from where the construct package carries the compiled router.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { PrefixAwareLlmWarnings, RouterSidecarMode, VllmImage } from '../../lib/index';
import {
  loadRouterSettings,
  routerSettingsCandidates,
  type RouterSettingsModule,
} from '../../lib/private/router-settings';
import * as containerConfig from '../../router/src/container/container-config';
import { build } from './helpers';

const ROOT = join(__dirname, '..', '..');

// The contract lib declares is the router module's shape: this line stops compiling when they drift apart.
const contract: RouterSettingsModule = containerConfig;

describe('when the construct looks for the router settings module', () => {
  it('GIVEN the installed package layout (dist/private) THEN the first place is the staged sidecar context the package ships', () => {
    expect(routerSettingsCandidates('/app/node_modules/cdk-prefix-aware-llm/dist/private')[0]).toBe(
      '/app/node_modules/cdk-prefix-aware-llm/sidecar/dist/router/src/container/container-config.js',
    );
  });

  it('GIVEN a checkout (lib/private) THEN it loads the router sources beside lib/, the same module the container runs', () => {
    expect(loadRouterSettings(join(ROOT, 'lib', 'private'))).toBe(contract);
  });

  it('GIVEN a folder with no router module THEN there is none, and the endpoint warns that the settings went unchecked', () => {
    expect(loadRouterSettings('/nonexistent/dist/private')).toBeUndefined();
  });

  it('GIVEN the staging script THEN it copies the compiled router/src, whose container-config module the first candidate names', () => {
    const script = readFileSync(join(ROOT, 'router', 'scripts', 'stage-sidecar-context.sh'), 'utf8');
    expect(script).toContain('cp -R "$root/router/dist/bin" "$root/router/dist/router" "$dest/dist/"');
  });
});

describe('when the module the construct loads is followed through its imports', () => {
  /** Every module reached from `file` by value imports: relative ones followed, others collected. */
  function closure(
    file: string,
    seen = new Set<string>(),
    packages = new Set<string>(),
  ): { seen: Set<string>; packages: Set<string> } {
    if (seen.has(file)) return { seen, packages };
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/^import\s+(type\s+)?[^;]*?from\s+'([^']+)'/gms)) {
      if (match[1]) continue; // erased at compile time
      const target = match[2];
      if (target.startsWith('.')) {
        const base = resolve(dirname(file), target);
        const next = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => {
          try {
            readFileSync(candidate);
            return true;
          } catch {
            return false;
          }
        });
        if (next) closure(next, seen, packages);
      } else packages.add(target);
    }
    return { seen, packages };
  }

  it('THEN it needs only Node built-ins: the staged context has no node_modules, and a CDK app installs no router dependency', () => {
    const { seen, packages } = closure(join(ROOT, 'router', 'src', 'container', 'container-config.ts'));
    expect(seen.size).toBeGreaterThan(5);
    expect([...packages].filter((name) => !name.startsWith('node:'))).toEqual([]);
  });
});

describe('when router sidecar settings are accepted by the router', () => {
  it('GIVEN a key file path that exists only in the container THEN synth accepts it (files are checked at start, their form here)', () => {
    expect(() =>
      build({
        image: VllmImage.withRouterSidecar({
          routerEnvironment: { PREFIX_ROUTER_API_KEY_FILE: '/opt/ml/model/keys.txt' },
        }),
      }),
    ).not.toThrow();
  });

  it('GIVEN every policy the registry has THEN each is accepted by name', () => {
    for (const policy of [
      'sagemaker-prefix-aware',
      'cache-aware',
      'least-outstanding-requests',
      'random',
      'round-robin',
    ]) {
      expect(() =>
        build({ image: VllmImage.withRouterSidecar({ mode: RouterSidecarMode.MULTI_ENGINE, engines: 8, policy }) }),
      ).not.toThrow();
    }
  });

  it('GIVEN a drain the container warns about THEN synth warns with an id a user can acknowledge', () => {
    const { stack } = build({
      image: VllmImage.withRouterSidecar({ routerEnvironment: { PREFIX_ROUTER_SHUTDOWN_GRACE_MS: '28000' } }),
    });
    const warnings = Annotations.fromStack(stack).findWarning(
      '*',
      Match.stringLikeRegexp("reach SageMaker's 30000 ms stop deadline"),
    );
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0].entry.data)).toContain(PrefixAwareLlmWarnings.ROUTER_SETTING_DOUBTFUL);
  });

  it('GIVEN several bad settings THEN one synth lists them all', () => {
    expect(() =>
      build({
        image: VllmImage.withRouterSidecar({
          policy: 'cache-awre',
          routerEnvironment: { PREFIX_ROUTER_LOG_LEVEL: 'loud', PREFIX_ROUTER_EMF_INTERVAL_MS: '5' },
        }),
      }),
    ).toThrow(/3 invalid settings/);
    for (const part of [
      'image.policy (PREFIX_ROUTER_POLICY) must be one of',
      "image.routerEnvironment['PREFIX_ROUTER_LOG_LEVEL'] (PREFIX_ROUTER_LOG_LEVEL) must be one of fatal",
      "image.routerEnvironment['PREFIX_ROUTER_EMF_INTERVAL_MS'] (PREFIX_ROUTER_EMF_INTERVAL_MS) must be an integer between 100",
    ]) {
      expect(() =>
        build({
          image: VllmImage.withRouterSidecar({
            policy: 'cache-awre',
            routerEnvironment: { PREFIX_ROUTER_LOG_LEVEL: 'loud', PREFIX_ROUTER_EMF_INTERVAL_MS: '5' },
          }),
        }),
      ).toThrow(part);
    }
  });
});

describe('when the installation carries no compiled router', () => {
  afterAll(() => jest.dontMock('../../lib/private/router-settings'));

  it('GIVEN a sidecar image THEN synth warns, with an id a user can acknowledge, that its settings went unchecked', () => {
    jest.isolateModules(() => {
      jest.doMock('../../lib/private/router-settings', () => ({
        loadRouterSettings: () => undefined,
        loadInstancePrices: () => undefined,
        loadEngineArgs: () => undefined,
        loadRouterModule: () => undefined,
      }));
      const lib = require('../../lib/index') as typeof import('../../lib/index');
      const { App, Stack } = require('aws-cdk-lib') as typeof import('aws-cdk-lib');
      const stack = new Stack(new App(), 'S');
      new lib.PrefixAwareLlmEndpoint(stack, 'Llm', {
        model: lib.ModelSource.huggingFace('meta-llama/Llama-3.1-70B-Instruct'),
        image: lib.VllmImage.withRouterSidecar({ policy: 'cache-awre' }),
      });
      // The isolated registry's own assertions: its matchers are not the outer module's classes.
      const assertions = require('aws-cdk-lib/assertions') as typeof import('aws-cdk-lib/assertions');
      const warnings = assertions.Annotations.fromStack(stack).findWarning(
        '*',
        assertions.Match.stringLikeRegexp('were not checked at synth'),
      );
      expect(JSON.stringify(warnings.map((w) => w.entry.data))).toContain(
        lib.PrefixAwareLlmWarnings.ROUTER_SETTINGS_UNCHECKED,
      );
    });
  });
});
