import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CONTAINER_DEFAULTS,
  CONTAINER_ENV,
  ContainerConfigError,
  parseContainerEnv,
} from '../../../router/src/container';
import {
  checkContainerEnvironment,
  CONTAINER_VARIABLES,
  loadContainerConfig,
} from '../../../router/src/container/container-config';
import { CLI_OPTIONS } from '../../../router/src/config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    parseContainerEnv(env);
  } catch (err) {
    if (err instanceof ContainerConfigError) return [...err.problems];
    throw err;
  }
  return [];
}

describe('when the container reads its environment', () => {
  it('GIVEN nothing THEN sagemaker mode, one engine, port 8080 on all interfaces, engines from 8100, EMF on every minute as PrefixRouter/local', () => {
    const { settings, warnings } = parseContainerEnv({});
    expect(settings).toMatchObject({
      mode: 'sagemaker',
      engines: 1,
      gpus: undefined,
      engineBasePort: 8100,
      port: 8080,
      host: '0.0.0.0',
      shutdownGraceMs: 20_000,
      engineStopTimeoutMs: 5_000,
      emf: { enabled: true, intervalMs: 60_000, namespace: 'PrefixRouter', endpointName: 'local' },
    });
    expect(settings.shutdownGraceMs + settings.engineStopTimeoutMs).toBeLessThan(30_000);
    expect(warnings).toEqual([]);
  });

  it('GIVEN SAGEMAKER_BIND_TO_PORT THEN the router listens there, unless PREFIX_ROUTER_PORT says otherwise', () => {
    expect(parseContainerEnv({ SAGEMAKER_BIND_TO_PORT: '9090' }).settings.port).toBe(9090);
    expect(parseContainerEnv({ SAGEMAKER_BIND_TO_PORT: '9090', PREFIX_ROUTER_PORT: '7070' }).settings.port).toBe(7070);
    expect(problemsOf({ SAGEMAKER_BIND_TO_PORT: '0' })).toEqual([
      'SAGEMAKER_BIND_TO_PORT must be an integer between 1 and 65535 (got "0")',
    ]);
  });

  it.each([
    ['0', 'PREFIX_ROUTER_ENGINES must be an integer between 1 and 64 (got "0")'],
    ['1', undefined],
    ['64', 'PREFIX_ROUTER_GPUS'],
    ['65', 'PREFIX_ROUTER_ENGINES must be an integer between 1 and 64 (got "65")'],
    ['two', 'PREFIX_ROUTER_ENGINES must be an integer between 1 and 64 (got "two")'],
  ])('GIVEN multi-engine with PREFIX_ROUTER_ENGINES=%s and 8 GPUs THEN the problem is %s', (engines, problem) => {
    const problems = problemsOf({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: engines,
      PREFIX_ROUTER_GPUS: '8',
    });
    if (problem === undefined) expect(problems).toEqual([]);
    else expect(problems.join('\n')).toContain(problem);
  });

  it('GIVEN multi-engine without PREFIX_ROUTER_ENGINES THEN it asks for it', () => {
    expect(problemsOf({ PREFIX_ROUTER_MODE: 'multi-engine' })).toEqual([
      'PREFIX_ROUTER_ENGINES must be set in multi-engine mode: an integer between 1 and 64 (got nothing)',
    ]);
  });

  it('GIVEN sagemaker mode with several engines THEN it points to multi-engine mode', () => {
    expect(problemsOf({ PREFIX_ROUTER_ENGINES: '2' })[0]).toMatch(
      /^PREFIX_ROUTER_ENGINES must be 1 in sagemaker mode .*PREFIX_ROUTER_MODE=multi-engine/,
    );
  });

  it('GIVEN an unknown mode THEN the message lists the modes', () => {
    expect(problemsOf({ PREFIX_ROUTER_MODE: 'fleet' })).toEqual([
      'PREFIX_ROUTER_MODE must be one of sagemaker, multi-engine (got "fleet")',
    ]);
  });

  it('GIVEN GPUs not divisible by engines, or fewer GPUs than engines THEN each is named', () => {
    expect(
      problemsOf({ PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '3', PREFIX_ROUTER_GPUS: '8' }),
    ).toEqual([
      'PREFIX_ROUTER_GPUS must be divisible by PREFIX_ROUTER_ENGINES so every engine gets the same number of GPUs (got 8 GPUs for 3 engines)',
    ]);
    expect(
      problemsOf({ PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '4', PREFIX_ROUTER_GPUS: '2' }),
    ).toContain('PREFIX_ROUTER_ENGINES must be at most PREFIX_ROUTER_GPUS (got 4 engines for 2 GPUs)');
    // 0 GPUs: engines without GPUs (a custom command), any count.
    expect(
      problemsOf({ PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '3', PREFIX_ROUTER_GPUS: '0' }),
    ).toEqual([]);
  });

  it.each([
    ['0', undefined],
    ['1', undefined],
    ['65533', undefined],
    [
      '65534',
      'PREFIX_ROUTER_ENGINE_BASE_PORT must be 0 (free ports) or an integer between 1 and 65533 so 3 consecutive ports fit (got "65534")',
    ],
    [
      '-1',
      'PREFIX_ROUTER_ENGINE_BASE_PORT must be 0 (free ports) or an integer between 1 and 65533 so 3 consecutive ports fit (got "-1")',
    ],
  ])('GIVEN three engines from base port %s THEN the problem is %s', (port, problem) => {
    const problems = problemsOf({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '3',
      PREFIX_ROUTER_ENGINE_BASE_PORT: port,
    });
    expect(problems).toEqual(problem === undefined ? [] : [problem]);
  });

  it("GIVEN engine ports that cover the router's port THEN it refuses", () => {
    expect(
      problemsOf({
        PREFIX_ROUTER_MODE: 'multi-engine',
        PREFIX_ROUTER_ENGINES: '2',
        PREFIX_ROUTER_ENGINE_BASE_PORT: '8079',
      }),
    ).toEqual([
      "PREFIX_ROUTER_ENGINE_BASE_PORT must leave the router's port 8080 free: engines would use 8079-8080 (got 8079)",
    ]);
  });

  it('GIVEN PREFIX_ROUTER_BACKENDS THEN it refuses: the engines are the backends', () => {
    expect(problemsOf({ PREFIX_ROUTER_BACKENDS: 'http://x:1' })[0]).toMatch(
      /^PREFIX_ROUTER_BACKENDS must not be set in the container/,
    );
  });

  it('GIVEN EMF settings THEN on/off, interval and namespace are checked', () => {
    expect(parseContainerEnv({ PREFIX_ROUTER_EMF: 'off' }).settings.emf.enabled).toBe(false);
    expect(
      problemsOf({
        PREFIX_ROUTER_EMF: 'true',
        PREFIX_ROUTER_EMF_INTERVAL_MS: '99',
        PREFIX_ROUTER_EMF_NAMESPACE: 'AWS/SageMaker',
      }),
    ).toEqual([
      'PREFIX_ROUTER_EMF must be on or off (got "true")',
      'PREFIX_ROUTER_EMF_INTERVAL_MS must be an integer between 100 and 3600000 (got "99")',
      'PREFIX_ROUTER_EMF_NAMESPACE must be 1-255 characters of letters, digits, spaces and . - _ / # :, not starting with AWS/ (got "AWS/SageMaker")',
    ]);
    expect(
      parseContainerEnv({ PREFIX_ROUTER_EMF_ENDPOINT_NAME: 'ep-1', PREFIX_ROUTER_EMF_NAMESPACE: 'Team/LLM' }).settings
        .emf,
    ).toMatchObject({ endpointName: 'ep-1', namespace: 'Team/LLM' });
  });

  it("GIVEN a drain and engine stop that reach SageMaker's 30 s THEN it warns but starts", () => {
    const { warnings } = parseContainerEnv({
      PREFIX_ROUTER_SHUTDOWN_GRACE_MS: '25000',
      PREFIX_ROUTER_ENGINE_STOP_TIMEOUT_MS: '5000',
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("SageMaker's 30000 ms stop deadline");
  });

  it('GIVEN restart backoff settings THEN the maximum may not be below the first delay', () => {
    expect(
      problemsOf({ PREFIX_ROUTER_RESTART_BACKOFF_MS: '5000', PREFIX_ROUTER_RESTART_BACKOFF_MAX_MS: '1000' }),
    ).toEqual([
      'PREFIX_ROUTER_RESTART_BACKOFF_MAX_MS must be at least PREFIX_ROUTER_RESTART_BACKOFF_MS (5000) (got 1000)',
    ]);
    expect(parseContainerEnv({ PREFIX_ROUTER_RESTART_BACKOFF_MS: '45000' }).settings.restartBackoffMaxMs).toBe(45_000);
  });

  it('GIVEN router settings THEN they are validated by the router config path, together with the container ones', () => {
    let error: unknown;
    try {
      loadContainerConfig({
        PREFIX_ROUTER_MODE: 'x',
        PREFIX_ROUTER_POLICY: 'nope',
        PREFIX_ROUTER_HEALTH_FAILURE_THRESHOLD: '0',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ContainerConfigError);
    const problems = (error as ContainerConfigError).problems;
    expect(problems[0]).toContain('PREFIX_ROUTER_MODE');
    expect(problems.some((p) => p.startsWith('PREFIX_ROUTER_POLICY'))).toBe(true);
    expect(problems.some((p) => p.startsWith('PREFIX_ROUTER_HEALTH_FAILURE_THRESHOLD'))).toBe(true);
  });

  it('GIVEN a router setting THEN the router gets it, with the backends, host, port and drain the container decides', () => {
    const { routerConfigFor } = loadContainerConfig({
      PREFIX_ROUTER_POLICY: 'round-robin',
      PREFIX_ROUTER_HEALTH_INTERVAL_MS: '500',
    });
    const config = routerConfigFor(['http://127.0.0.1:8100']);
    expect(config).toMatchObject({
      policy: { name: 'round-robin' },
      host: CONTAINER_DEFAULTS.host,
      port: 8080,
      shutdownGraceMs: CONTAINER_DEFAULTS.shutdownGraceMs,
      healthCheck: { intervalMs: 500 },
      backends: [{ id: 'http://127.0.0.1:8100' }],
    });
    expect(
      loadContainerConfig({ PREFIX_ROUTER_SHUTDOWN_GRACE_MS: '1000' }).routerConfigFor(['http://127.0.0.1:1'])
        .shutdownGraceMs,
    ).toBe(1000);
  });
});

describe('when docs/container.md is read', () => {
  it('GIVEN its environment table THEN every container variable is documented with its default', () => {
    const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'container.md'), 'utf8');
    for (const variable of Object.values(CONTAINER_ENV)) {
      if (variable === 'PREFIX_ROUTER_BACKENDS') continue; // documented as refused, above the table
      expect(doc).toMatch(new RegExp(`^\\| \`${variable}\` \\|`, 'm'));
    }
  });
});

describe('when the container chooses the router policy', () => {
  const policyOf = (env: Record<string, string>): string =>
    loadContainerConfig(env).routerConfigFor(['http://127.0.0.1:8100', 'http://127.0.0.1:8101']).policy.name;

  it.each([
    [{ PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '2', PREFIX_ROUTER_GPUS: '2' }, 'cache-aware'],
    [
      {
        PREFIX_ROUTER_MODE: 'multi-engine',
        PREFIX_ROUTER_ENGINES: '2',
        PREFIX_ROUTER_GPUS: '2',
        PREFIX_ROUTER_POLICY: 'sagemaker-prefix-aware?prefixLength=4096',
      },
      'sagemaker-prefix-aware',
    ],
    [{}, 'sagemaker-prefix-aware'],
  ])('GIVEN %p THEN the router runs %s', (env, policy) => {
    expect(policyOf(env)).toBe(policy);
  });
});

describe('when the container environment is checked without its machine (cdk synth)', () => {
  it('GIVEN a key file and a config file that exist only in the container THEN the check accepts them while the start reads them', () => {
    const env = {
      PREFIX_ROUTER_API_KEY_FILE: '/opt/ml/model/keys.txt',
      PREFIX_ROUTER_CONFIG: '/opt/ml/model/router.json',
    };
    expect(checkContainerEnvironment(env)).toEqual({ problems: [], warnings: [], unknownVariables: [] });
    expect(() => loadContainerConfig(env)).toThrow(ContainerConfigError);
  });

  it('GIVEN a misspelt variable THEN it is listed as unknown, and a known one is not', () => {
    expect(
      checkContainerEnvironment({ PREFIX_ROUTER_POLCY: 'random', PREFIX_ROUTER_LOG_LEVEL: 'warn' }).unknownVariables,
    ).toEqual(['PREFIX_ROUTER_POLCY']);
  });

  it('GIVEN every router flag and container variable THEN each is a known variable', () => {
    for (const option of CLI_OPTIONS) expect(CONTAINER_VARIABLES).toContain(option.env);
    for (const name of Object.values(CONTAINER_ENV).filter((n) => n.startsWith('PREFIX_ROUTER_')))
      expect(CONTAINER_VARIABLES).toContain(name);
  });

  it('GIVEN a bad policy and a doubtful drain THEN the problem and the warning are the start-up ones', () => {
    expect(checkContainerEnvironment({ PREFIX_ROUTER_POLICY: 'cache-awre' }).problems).toEqual([
      expect.stringMatching(/^PREFIX_ROUTER_POLICY must be one of sagemaker-prefix-aware, cache-aware/),
    ]);
    expect(checkContainerEnvironment({ PREFIX_ROUTER_SHUTDOWN_GRACE_MS: '28000' }).warnings).toEqual([
      expect.stringContaining("reach SageMaker's 30000 ms stop deadline"),
    ]);
  });
});
