import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkContainerEnvironment,
  engineKvEventSockets,
  findModelTokenizer,
  huggingFaceHubCache,
  loadContainerConfig,
  parseContainerEnv,
  planEngines,
  type DlcFiles,
  type GpuInventory,
} from '../../../router/src/container';

/** PREFIX_ROUTER_ENGINE_KV_EVENTS: the variable, the engines' ports and sockets, the tokenizer, the router's streams. */
const NO_DLC_FILES: DlcFiles = { modelDirHasFiles: false, routeMiddleware: false };
const MODEL_DIR: DlcFiles = { modelDirHasFiles: true, routeMiddleware: false };
const gpus = (n: number): GpuInventory => ({
  ids: Array.from({ length: n }, (_, i) => String(i)),
  source: 'PREFIX_ROUTER_GPUS',
});
const MULTI = { PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '2' };
const EMULATED = 'emulate --port {port} --kv-events-config {kv_events_config}';

function problemsOf(env: Record<string, string>): readonly string[] {
  return checkContainerEnvironment(env).problems;
}

describe('when PREFIX_ROUTER_ENGINE_KV_EVENTS is read', () => {
  it.each([
    [undefined, false],
    ['off', false],
    ['on', true],
  ])('GIVEN %s THEN KV events are %s', (raw, on) => {
    const env = raw === undefined ? {} : { PREFIX_ROUTER_ENGINE_KV_EVENTS: raw };
    expect(parseContainerEnv(env).settings.engineKvEvents).toBe(on);
  });

  it('GIVEN a value other than on or off THEN the start is refused naming the variable', () => {
    expect(() => parseContainerEnv({ PREFIX_ROUTER_ENGINE_KV_EVENTS: 'yes' })).toThrow(
      'PREFIX_ROUTER_ENGINE_KV_EVENTS must be on or off (got "yes")',
    );
  });

  it('GIVEN SAGEMAKER_SAFE_PORT_RANGE THEN it must hold two ports per engine (3 for 2 engines is one short, 4 fits)', () => {
    const env = { ...MULTI, PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on' };
    expect(() => parseContainerEnv({ ...env, SAGEMAKER_SAFE_PORT_RANGE: '9000-9002' })).toThrow(
      'SAGEMAKER_SAFE_PORT_RANGE must hold the 4 ports of the 2 engines (with PREFIX_ROUTER_ENGINE_KV_EVENTS=on, 2 each) (got "9000-9002")',
    );
    expect(parseContainerEnv({ ...env, SAGEMAKER_SAFE_PORT_RANGE: '9000-9003' }).settings.engineBasePort).toBe(9000);
  });

  it("GIVEN the router's port among the replay ports THEN the start is refused", () => {
    const env = { ...MULTI, PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on', PREFIX_ROUTER_ENGINE_BASE_PORT: '8100' };
    expect(() => parseContainerEnv({ ...env, PREFIX_ROUTER_PORT: '8103' })).toThrow(
      "PREFIX_ROUTER_ENGINE_BASE_PORT must leave the router's port 8103 free: engines would use 8100-8103",
    );
    expect(parseContainerEnv({ ...env, PREFIX_ROUTER_PORT: '8104' }).settings.port).toBe(8104);
  });

  it.each(['PREFIX_ROUTER_KV_EVENTS', 'PREFIX_ROUTER_KV_EVENTS_REPLAY'])(
    'GIVEN %s set by the user THEN it is refused: the container follows the engines it starts',
    (name) => {
      expect(problemsOf({ [name]: 'http://127.0.0.1:8100=ipc:///tmp/x' })).toContainEqual(
        expect.stringContaining(`${name} must not be set in the container: set PREFIX_ROUTER_ENGINE_KV_EVENTS=on`),
      );
    },
  );

  it.each([
    ['sagemaker-prefix-aware', false],
    ['least-outstanding-requests', false],
    ['cache-aware', true],
    ['llm-d-precise', true],
  ])('GIVEN policy %s THEN it is accepted only when it reads the events (%s)', (policy, accepted) => {
    const problems = problemsOf({
      ...MULTI,
      PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on',
      PREFIX_ROUTER_POLICY: policy,
      PREFIX_ROUTER_TOKENIZER: 'emulator',
    });
    const refusal = `PREFIX_ROUTER_ENGINE_KV_EVENTS must be off unless the router's policy reads the engines' KV events, PREFIX_ROUTER_POLICY one of cache-aware, llm-d-precise (got on with policy ${policy})`;
    expect(problems.includes(refusal)).toBe(!accepted);
    // serve runs llm-d-precise here: the container follows every engine's events.
    if (accepted) expect(problems).toEqual([]);
  });

  it("GIVEN multi-engine mode's default policy (cache-aware) and a tokenizer THEN the settings pass", () => {
    expect(problemsOf({ ...MULTI, PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on', PREFIX_ROUTER_TOKENIZER: 'emulator' })).toEqual(
      [],
    );
  });
});

describe('when the engines are planned with KV events on', () => {
  const settings = (extra: Record<string, string> = {}) =>
    parseContainerEnv({ ...MULTI, PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on', ...extra }).settings;
  const sockets = engineKvEventSockets('/run/kv', [8102, 8103]);

  it('GIVEN two engines THEN each gets an ipc:// PUB socket in the directory and its own loopback replay port', () => {
    expect(sockets).toEqual([
      { endpoint: 'ipc:///run/kv/engine-0.kv', replayEndpoint: 'tcp://127.0.0.1:8102' },
      { endpoint: 'ipc:///run/kv/engine-1.kv', replayEndpoint: 'tcp://127.0.0.1:8103' },
    ]);
  });

  it("GIVEN the default engine (vLLM) THEN its argv carries --kv-events-config as vLLM's KVEventsConfig JSON", () => {
    const env = { SM_VLLM_MODEL: 'org/model', PREFIX_ROUTER_TOKENIZER: '/models/tokenizer.json' };
    const plan = planEngines(settings(), gpus(2), [8100, 8101], env, NO_DLC_FILES, sockets);
    const argv = plan[1].argv;
    expect(JSON.parse(argv[argv.indexOf('--kv-events-config') + 1])).toEqual({
      enable_kv_cache_events: true,
      publisher: 'zmq',
      endpoint: 'ipc:///run/kv/engine-1.kv',
      replay_endpoint: 'tcp://127.0.0.1:8103',
    });
    expect(plan[1].kvEvents).toEqual(sockets[1]);
  });

  it('GIVEN an engine command THEN {kv_events_config} is one word, required with KV events and refused without', () => {
    const env = { PREFIX_ROUTER_TOKENIZER: 'emulator' };
    const plan = planEngines(
      settings({ PREFIX_ROUTER_ENGINE_COMMAND: EMULATED }),
      gpus(2),
      [8100, 8101],
      env,
      NO_DLC_FILES,
      sockets,
    );
    expect(plan[0].argv.slice(-2)).toEqual([
      '--kv-events-config',
      expect.stringContaining('"ipc:///run/kv/engine-0.kv"'),
    ]);
    expect(() =>
      planEngines(
        settings({ PREFIX_ROUTER_ENGINE_COMMAND: 'emulate --port {port}' }),
        gpus(2),
        [1, 2],
        env,
        NO_DLC_FILES,
        sockets,
      ),
    ).toThrow('PREFIX_ROUTER_ENGINE_COMMAND must pass {kv_events_config} to the engine');
    const off = parseContainerEnv({ ...MULTI, PREFIX_ROUTER_ENGINE_COMMAND: EMULATED }).settings;
    expect(() => planEngines(off, gpus(2), [1, 2], {}, NO_DLC_FILES)).toThrow(
      'PREFIX_ROUTER_ENGINE_COMMAND uses {kv_events_config}, which is given only with PREFIX_ROUTER_ENGINE_KV_EVENTS=on (got off)',
    );
  });

  it("GIVEN SM_VLLM_KV_EVENTS_CONFIG of the user's THEN it is refused: the container owns the engines' sockets", () => {
    const env = { SM_VLLM_MODEL: 'org/model', PREFIX_ROUTER_TOKENIZER: 't.json', SM_VLLM_KV_EVENTS_CONFIG: '{}' };
    expect(() => planEngines(settings(), gpus(2), [1, 2], env, NO_DLC_FILES, sockets)).toThrow(
      'SM_VLLM_KV_EVENTS_CONFIG must not be set with PREFIX_ROUTER_ENGINE_KV_EVENTS=on',
    );
  });

  it('GIVEN no tokenizer to be found THEN the plan fails fast naming where it looked and what to set', () => {
    expect(() => planEngines(settings(), gpus(2), [1, 2], {}, MODEL_DIR, sockets)).toThrow(
      "PREFIX_ROUTER_ENGINE_KV_EVENTS=on needs the model's tokenizer.json to tokenize requests as the engine does: none in /opt/ml/model/tokenizer.json; put the model (with its tokenizer.json) in /opt/ml/model, or set PREFIX_ROUTER_TOKENIZER to its tokenizer.json",
    );
  });

  it("GIVEN the router's config for the planned engines THEN it follows each engine's two sockets with the tokenizer", () => {
    const env = { ...MULTI, PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on', PREFIX_ROUTER_TOKENIZER: 'emulator' };
    const urls = ['http://127.0.0.1:8100', 'http://127.0.0.1:8101'];
    const config = loadContainerConfig(env).routerConfigFor(urls, {
      streams: urls.map((url, i) => ({ url, ...sockets[i] })),
      tokenizer: undefined,
    });
    expect(config.kvEvents).toEqual([
      { engine: urls[0], endpoint: sockets[0].endpoint, replayEndpoint: sockets[0].replayEndpoint },
      { engine: urls[1], endpoint: sockets[1].endpoint, replayEndpoint: sockets[1].replayEndpoint },
    ]);
    expect(config.tokenizer).toBe('emulator');
  });
});

/** PREFIX_ROUTER_TOKENIZER_WAIT_MS's default: a tokenizer the engine downloads is waited for. */
const WAITS = 3_600_000;

describe("when the container looks for the model's tokenizer.json", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kv-tokenizer-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A snapshot of `repoId` in the hub cache `hub`, reached through refs/`ref` when given. */
  function cacheSnapshot(hub: string, repoId: string, commit: string, ref?: string): string {
    const repo = join(hub, `models--${repoId.replace('/', '--')}`);
    mkdirSync(join(repo, 'snapshots', commit), { recursive: true });
    if (ref !== undefined) {
      mkdirSync(join(repo, 'refs'), { recursive: true });
      writeFileSync(join(repo, 'refs', ref), `${commit}\n`);
    }
    writeFileSync(join(repo, 'snapshots', commit, 'tokenizer.json'), '{}');
    return join(repo, 'snapshots', commit, 'tokenizer.json');
  }

  it('GIVEN PREFIX_ROUTER_TOKENIZER THEN that is used as given (the router checks it)', () => {
    expect(findModelTokenizer({ PREFIX_ROUTER_TOKENIZER: 'emulator' }, 'emulate', NO_DLC_FILES, WAITS)).toEqual({
      kind: 'configured',
    });
  });

  it('GIVEN an engine command and no PREFIX_ROUTER_TOKENIZER THEN it is missing, naming the variable', () => {
    const found = findModelTokenizer({}, 'emulate', NO_DLC_FILES, WAITS);
    expect(found.kind === 'missing' && found.problem).toContain(
      'with PREFIX_ROUTER_ENGINE_COMMAND needs PREFIX_ROUTER_TOKENIZER',
    );
  });

  it('GIVEN SM_VLLM_MODEL as a directory holding tokenizer.json THEN that file', () => {
    const model = join(dir, 'model');
    mkdirSync(model);
    writeFileSync(join(model, 'tokenizer.json'), '{}');
    expect(findModelTokenizer({ SM_VLLM_MODEL: model }, undefined, NO_DLC_FILES, WAITS)).toEqual({
      kind: 'found',
      path: join(model, 'tokenizer.json'),
    });
  });

  it("GIVEN a Hugging Face id in the hub cache THEN its revision's snapshot, through refs/", () => {
    const path = cacheSnapshot(join(dir, 'hub'), 'org/llama', 'abc123', 'v2');
    const env = { SM_VLLM_MODEL: 'org/llama', SM_VLLM_REVISION: 'v2', HF_HOME: dir };
    expect(findModelTokenizer(env, undefined, NO_DLC_FILES, WAITS)).toEqual({ kind: 'found', path });
    const main = findModelTokenizer({ ...env, SM_VLLM_REVISION: '' }, undefined, NO_DLC_FILES, 0);
    expect(main.kind === 'missing' && main.problem).toContain(
      `none in the Hugging Face cache at start, ${join(dir, 'hub', 'models--org--llama', 'snapshots')}/COMMIT, with refs/main not written yet/tokenizer.json (model org/llama, revision main), and PREFIX_ROUTER_TOKENIZER_WAIT_MS=0 does not wait`,
    );
  });

  it("GIVEN vLLM's --tokenizer and --tokenizer-revision (SM_VLLM_TOKENIZER, SM_VLLM_TOKENIZER_REVISION) THEN the engine's tokenizer is looked for, not the model's", () => {
    const path = cacheSnapshot(join(dir, 'hub'), 'org/tokenizer-only', 'fed456', 'v3');
    const env = {
      HF_MODEL_ID: 'org/weights',
      SM_VLLM_REVISION: 'v9',
      SM_VLLM_TOKENIZER: 'org/tokenizer-only',
      SM_VLLM_TOKENIZER_REVISION: 'v3',
      HF_HOME: dir,
    };
    expect(findModelTokenizer(env, undefined, NO_DLC_FILES, WAITS)).toEqual({ kind: 'found', path });
    const local = join(dir, 'tokenizer-dir');
    mkdirSync(local);
    writeFileSync(join(local, 'tokenizer.json'), '{}');
    expect(findModelTokenizer({ ...env, SM_VLLM_TOKENIZER: local }, undefined, NO_DLC_FILES, WAITS)).toEqual({
      kind: 'found',
      path: join(local, 'tokenizer.json'),
    });
  });

  it.each([
    [{ HF_HUB_CACHE: '/a/hub', HUGGINGFACE_HUB_CACHE: '/b/hub', HF_HOME: '/c' }, '/a/hub'],
    [{ HUGGINGFACE_HUB_CACHE: '/b/hub', HF_HOME: '/c', XDG_CACHE_HOME: '/x' }, '/b/hub'],
    [{ HF_HOME: '/c', XDG_CACHE_HOME: '/x' }, '/c/hub'],
    [{ XDG_CACHE_HOME: '/x', HOME: '/home/u' }, '/x/huggingface/hub'],
    [{ HOME: '/home/u' }, '/home/u/.cache/huggingface/hub'],
  ])("GIVEN %j THEN the hub cache is huggingface_hub's %s", (env, cache) => {
    expect(huggingFaceHubCache(env)).toBe(cache);
  });

  it('GIVEN a Hugging Face id the cache does not hold yet THEN the engine is to download it: the container waits for that revision', () => {
    const env = { HF_MODEL_ID: 'org/not-yet', SM_VLLM_REVISION: 'v1', HF_HUB_CACHE: join(dir, 'empty-hub') };
    expect(findModelTokenizer(env, undefined, NO_DLC_FILES, WAITS)).toEqual({
      kind: 'download',
      hub: { repoId: 'org/not-yet', revision: 'v1', cacheDir: join(dir, 'empty-hub') },
    });
    const on = parseContainerEnv({ ...MULTI, PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on' }).settings;
    const sockets = engineKvEventSockets('/run/kv', [8102, 8103]);
    expect(() => planEngines(on, gpus(2), [8100, 8101], env, NO_DLC_FILES, sockets)).not.toThrow();
    const noWait = parseContainerEnv({
      ...MULTI,
      PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on',
      PREFIX_ROUTER_TOKENIZER_WAIT_MS: '0',
    });
    expect(() => planEngines(noWait.settings, gpus(2), [8100, 8101], env, NO_DLC_FILES, sockets)).toThrow(
      'PREFIX_ROUTER_TOKENIZER_WAIT_MS=0 does not wait for the engine to download it',
    );
  });

  it.each(['1', 'true', 'YES', 'On'])(
    'GIVEN HF_HUB_OFFLINE=%s and a model the cache does not hold THEN it is missing at start: the engine downloads nothing',
    (offline) => {
      const env = { HF_MODEL_ID: 'org/not-yet', HF_HUB_CACHE: join(dir, 'empty-hub'), HF_HUB_OFFLINE: offline };
      const found = findModelTokenizer(env, undefined, NO_DLC_FILES, WAITS);
      expect(found.kind === 'missing' && found.problem).toContain('HF_HUB_OFFLINE stops the engine downloading it');
      const online = findModelTokenizer({ ...env, HF_HUB_OFFLINE: '0' }, undefined, NO_DLC_FILES, WAITS);
      expect(online.kind).toBe('download');
    },
  );
});

describe('when PREFIX_ROUTER_TOKENIZER_WAIT_MS is read', () => {
  it.each([
    ['-1', undefined],
    ['0', 0],
    ['86400000', 86_400_000],
    ['86400001', undefined],
  ])('GIVEN %s THEN the wait is %s ms (else refused naming the variable and range)', (raw, waitMs) => {
    const read = () => parseContainerEnv({ PREFIX_ROUTER_TOKENIZER_WAIT_MS: raw }).settings.tokenizerWaitMs;
    if (waitMs !== undefined) expect(read()).toBe(waitMs);
    else
      expect(read).toThrow(`PREFIX_ROUTER_TOKENIZER_WAIT_MS must be an integer between 0 and 86400000 (got "${raw}")`);
  });

  it("GIVEN nothing THEN an hour: SageMaker's longest start-up health check", () => {
    expect(parseContainerEnv({}).settings.tokenizerWaitMs).toBe(3_600_000);
  });
});
