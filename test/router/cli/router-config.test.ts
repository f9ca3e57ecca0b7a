import { POLICY_NAMES } from '../../../router/src/policy';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLI_OPTIONS,
  loadRouterConfig,
  resolveRouterConfig,
  ROUTER_DEFAULTS,
  RouterConfigError,
  type ConfigSources,
  type RouterOptions,
} from '../../../router/src/config';

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RouterConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a RouterConfigError');
}

function configFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'router-config-'));
  const path = join(dir, 'router.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const sources = (flags: Record<string, unknown>, env: Record<string, string> = {}): ConfigSources => ({ flags, env });

describe('when router options are resolved programmatically', () => {
  it('GIVEN only backends THEN every default applies and backend ids are normalized URLs', () => {
    const config = resolveRouterConfig({ backends: ['http://127.0.0.1:8001/', 'https://gpu-2.internal:9000/base/'] });
    expect(config.backends).toEqual([
      { id: 'http://127.0.0.1:8001', origin: 'http://127.0.0.1:8001', basePath: '' },
      { id: 'https://gpu-2.internal:9000/base', origin: 'https://gpu-2.internal:9000', basePath: '/base' },
    ]);
    expect(config).toMatchObject({
      policy: { name: 'sagemaker-prefix-aware' },
      host: '127.0.0.1',
      port: 8080,
      healthCheck: ROUTER_DEFAULTS.healthCheck,
      limits: ROUTER_DEFAULTS.limits,
      logLevel: 'info',
    });
  });

  it.each([
    [{ port: -1 }, 'port must be an integer between 0 and 65535 (got -1)'],
    [{ port: 65536 }, 'port must be an integer between 0 and 65535 (got 65536)'],
    [
      { healthCheck: { intervalMs: 49 } },
      'healthCheck.intervalMs must be 0 (off) or an integer between 50 and 3600000 (got 49)',
    ],
    [
      { healthCheck: { failureThreshold: 0 } },
      'healthCheck.failureThreshold must be an integer between 1 and 100 (got 0)',
    ],
    [{ healthCheck: { path: 'health' } }, 'healthCheck.path must be a path starting with \'/\' (got "health")'],
    [
      { limits: { maxBodyBytes: 1023 } },
      'limits.maxBodyBytes must be an integer between 1024 and 1073741824 (got 1023)',
    ],
    [{ limits: { bodyTimeoutMs: 99 } }, 'limits.bodyTimeoutMs must be an integer between 100 and 3600000 (got 99)'],
    [{ shutdownGraceMs: 3_600_001 }, 'shutdownGraceMs must be an integer between 0 and 3600000 (got 3600001)'],
    [{ logLevel: 'loud' }, 'logLevel must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
    [
      { policy: { name: 'sagemaker-prefix-aware', prefixLength: 65537 } },
      'policy.prefixLength must be an integer between 1024 and 65536 (got 65537)',
    ],
    [{ limits: { maxBodyByte: 10 } }, 'limits.maxBodyByte is not a limits option (got 10)'],
    [{ prefixLength: 4096 }, 'prefixLength is not a router option (got 4096)'],
    [{ publishStateMs: 10_001 }, 'publishStateMs must be an integer between 0 and 10000 (got 10001)'],
    [{ publishStateBlockChars: 15 }, 'publishStateBlockChars must be an integer between 16 and 65536 (got 15)'],
    [{ observeInstances: 'yes' }, "observeInstances must be 'on' or 'off' (got \"yes\")"],
  ])('GIVEN %j THEN the message names the option, the range and the value', (extra, message) => {
    expect(
      errorOf(() => resolveRouterConfig({ backends: ['http://127.0.0.1:1'], ...extra } as RouterOptions)),
    ).toContain(message);
  });

  it.each([
    [{ port: 0 }],
    [{ port: 65535 }],
    [{ healthCheck: { intervalMs: 0 } }],
    [{ healthCheck: { intervalMs: 50 } }],
    [{ limits: { maxBodyBytes: 1024 } }],
    [{ publishStateMs: 0, publishStateBlockChars: 16, observeInstances: 'off' }],
    [{ publishStateMs: 10_000, publishStateBlockChars: 65_536, observeInstances: 'on' }],
    [{ policy: { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 1024 } }],
  ])('GIVEN boundary value %j THEN it is accepted', (extra) => {
    expect(() => resolveRouterConfig({ backends: ['http://127.0.0.1:1'], ...extra } as RouterOptions)).not.toThrow();
  });

  it.each([
    [[], 'backends must list at least one backend URL (http://host:port) (got [])'],
    [['ftp://x'], 'backends[0] must be an http:// or https:// URL without query or fragment (got "ftp://x")'],
    [['http://a:1?x=1'], 'backends[0] must be an http:// or https:// URL without query or fragment'],
    [['http://a:1', 'http://a:1/'], 'backends[1] is listed twice (got "http://a:1/")'],
  ])('GIVEN backends %j THEN they are rejected', (backends, message) => {
    expect(errorOf(() => resolveRouterConfig({ backends }))).toContain(message);
  });
});

describe('when the CLI loads configuration from flags, environment and file', () => {
  it('GIVEN the same option in all three THEN the flag wins over the env var, which wins over the file', () => {
    const file = configFile({
      backends: ['http://file:1'],
      port: 1111,
      policy: { name: 'sagemaker-prefix-aware', prefixLength: 2048 },
      healthCheck: { intervalMs: 500 },
    });
    const config = loadRouterConfig(
      sources(
        { config: file, port: '3333' },
        {
          PREFIX_ROUTER_PORT: '2222',
          PREFIX_ROUTER_PREFIX_LENGTH: '8192',
          PREFIX_ROUTER_BACKENDS: 'http://env:1, http://env:2',
        },
      ),
    );
    expect(config.port).toBe(3333);
    expect(config.policy).toEqual({ name: 'sagemaker-prefix-aware', prefixLength: 8192 });
    expect(config.backends.map((b) => b.id)).toEqual(['http://env:1', 'http://env:2']);
    expect(config.healthCheck.intervalMs).toBe(500);
  });

  it('GIVEN repeated --backend flags and --policy with its options THEN they are assembled', () => {
    const config = loadRouterConfig(
      sources({ backend: ['http://a:1', 'http://b:2'], policy: 'round-robin', logLevel: 'warn' }),
    );
    expect(config.backends.map((b) => b.id)).toEqual(['http://a:1', 'http://b:2']);
    expect(config.policy).toEqual({ name: 'round-robin' });
    expect(config.logLevel).toBe('warn');
  });

  it('GIVEN a file policy given as a name THEN it is accepted', () => {
    const file = configFile({ backends: ['http://a:1'], policy: 'least-outstanding-requests' });
    expect(loadRouterConfig(sources({ config: file })).policy).toEqual({ name: 'least-outstanding-requests' });
  });

  it('GIVEN a bad flag THEN the message names the flag', () => {
    expect(errorOf(() => loadRouterConfig(sources({ backend: ['http://a:1'], prefixLength: '512' })))).toContain(
      '--prefix-length must be an integer between 1024 and 65536 (got 512)',
    );
    expect(errorOf(() => loadRouterConfig(sources({ backend: ['http://a:1'], port: 'eighty' })))).toContain(
      '--port must be an integer between 0 and 65535 (got "eighty")',
    );
  });

  it('GIVEN a bad env var THEN the message names the variable', () => {
    expect(
      errorOf(() =>
        loadRouterConfig(sources({ backend: ['http://a:1'] }, { PREFIX_ROUTER_CONCURRENCY_THRESHOLD: '0' })),
      ),
    ).toContain('PREFIX_ROUTER_CONCURRENCY_THRESHOLD must be an integer between 1 and 1024 (got 0)');
  });

  it('GIVEN a bad file value THEN the message names the key and the file', () => {
    const file = configFile({ backends: ['http://a:1'], healthCheck: { timeoutMs: 5 } });
    expect(errorOf(() => loadRouterConfig(sources({ config: file })))).toContain(
      `healthCheck.timeoutMs in ${file} must be an integer between 10 and 600000 (got 5)`,
    );
  });

  it('GIVEN no backends anywhere THEN the message says how to give them', () => {
    expect(errorOf(() => loadRouterConfig(sources({})))).toContain(
      '--backend (or PREFIX_ROUTER_BACKENDS) must list at least one backend URL (http://host:port) (got nothing)',
    );
  });

  it('GIVEN several problems THEN all are reported at once', () => {
    const message = errorOf(() => loadRouterConfig(sources({ backend: ['nope'], port: '70000', policy: 'fastest' })));
    expect(message).toContain('--backend must be an http:// or https:// URL');
    expect(message).toContain('--port must be an integer between 0 and 65535 (got 70000)');
    expect(message).toContain(`--policy must be one of ${POLICY_NAMES.join(', ')} (got "fastest")`);
  });

  it('GIVEN a missing or malformed config file THEN the message names --config', () => {
    expect(errorOf(() => loadRouterConfig(sources({ config: '/nonexistent/router.json' })))).toContain(
      '--config /nonexistent/router.json cannot be read (ENOENT)',
    );
    const bad = configFile('{ not json');
    expect(errorOf(() => loadRouterConfig(sources({ config: bad })))).toContain(`--config ${bad} is not valid JSON`);
  });
});

describe('when the configuration is documented', () => {
  const docs = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'router.md'), 'utf8');
  it.each(CLI_OPTIONS.map((o) => [o.flag, o]))(
    'GIVEN option %s THEN docs/router.md has its flag, variable and file key in one row',
    (_flag, option) => {
      // A table cell escapes `|` (GitHub splits cells on it even inside code).
      const flagCell = `${option.flag} <${option.valueName}>`.replace(/\|/g, '\\|');
      const row = docs.split('\n').find((line) => line.startsWith(`| \`${flagCell}\``));
      expect(row).toBeDefined();
      expect(row).toContain(`\`${option.env}\``);
      expect(row).toContain(`\`${option.path}\``);
    },
  );
});
