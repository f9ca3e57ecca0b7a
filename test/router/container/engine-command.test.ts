import fc from 'fast-check';
import {
  countNvidiaSmiGpus,
  defaultEngineArgv,
  detectGpus,
  engineCommandProblems,
  enginePlanWarnings,
  redactArgv,
  parseContainerEnv,
  planEngines,
  renderCommandTemplate,
  smVllmArgs,
  splitCommandLine,
  resolveModel,
  smVllmValueWords,
  type DlcFiles,
  type GpuInventory,
} from '../../../router/src/container';
import { ContainerConfigError } from '../../../router/src/container';

const NO_DLC_FILES: DlcFiles = { modelDirHasFiles: false, routeMiddleware: false };
const gpus = (n: number, source: GpuInventory['source'] = 'PREFIX_ROUTER_GPUS'): GpuInventory => ({
  ids: Array.from({ length: n }, (_, i) => String(i)),
  source,
});

describe('when an engine command line is split into words', () => {
  it('GIVEN quotes and backslashes THEN it splits like a shell, without expansions', () => {
    expect(splitCommandLine(`python3 -m x --a 'b c' "d \\"e\\"" f\\ g $HOME`)).toEqual([
      'python3',
      '-m',
      'x',
      '--a',
      'b c',
      'd "e"',
      'f g',
      '$HOME',
    ]);
    expect(splitCommandLine(`  a  ''  b `)).toEqual(['a', '', 'b']);
    expect(() => splitCommandLine(`a 'b`)).toThrow("unclosed ' quote");
  });

  it('GIVEN any words single-quoted shell-style THEN splitting gives them back', () => {
    const quote = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 6 }), (words) => {
        expect(splitCommandLine(words.map(quote).join(' '))).toEqual(words);
      }),
    );
  });

  it('GIVEN a template THEN {port}, {gpus}, {index} and {tp} are replaced, and unknown placeholders are refused', () => {
    expect(
      renderCommandTemplate("engine --port {port} --devices '{gpus}' --name e{index} --tp {tp}", {
        port: '8101',
        gpus: '2,3',
        index: '1',
        tp: '2',
        kv_events_config: '{}',
      }),
    ).toEqual(['engine', '--port', '8101', '--devices', '2,3', '--name', 'e1', '--tp', '2']);
    expect(engineCommandProblems('engine --port {port} --x {model}', 'PREFIX_ROUTER_ENGINE_COMMAND')).toEqual([
      'PREFIX_ROUTER_ENGINE_COMMAND may use only the placeholders {port}, {gpus}, {index}, {tp}, {kv_events_config} (got {model})',
    ]);
    expect(engineCommandProblems('   ', 'PREFIX_ROUTER_ENGINE_COMMAND')).toEqual([
      'PREFIX_ROUTER_ENGINE_COMMAND must name a program (got "   ")',
    ]);
  });
});

describe('when an engine command is logged', () => {
  it('GIVEN flags that carry secrets THEN their values are replaced, other words kept', () => {
    expect(
      redactArgv([
        'vllm',
        '--api-key',
        's3cr3t',
        '--hf-token=abc',
        '--model',
        'm',
        '--enable-prefix-caching',
        '--tokenizer-mode',
        'auto',
      ]),
    ).toEqual([
      'vllm',
      '--api-key',
      '***',
      '--hf-token=***',
      '--model',
      'm',
      '--enable-prefix-caching',
      '--tokenizer-mode',
      'auto',
    ]);
    expect(redactArgv(['x', '--api-key'])).toEqual(['x', '--api-key']);
  });
});

describe('when the default engine is rendered from SM_VLLM_* variables', () => {
  it("GIVEN the construct's variables THEN they become vLLM flags the DLC way, with host and port owned by the container", () => {
    const env = {
      SM_VLLM_MODEL: '/opt/ml/model',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '8',
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
      SM_VLLM_ENFORCE_EAGER: '',
      SM_VLLM_DISABLE_LOG_STATS: 'false',
      SM_VLLM_MAX_MODEL_LEN: '32768',
      SM_VLLM_PORT: '8080',
      SM_VLLM_HOST: '0.0.0.0',
      OTHER: 'x',
    };
    expect(defaultEngineArgv(env, 8100, undefined)).toEqual([
      'python3',
      '-m',
      'vllm.entrypoints.openai.api_server',
      '--host',
      '127.0.0.1',
      '--port',
      '8100',
      '--enable-prefix-caching',
      '--enforce-eager',
      '--max-model-len',
      '32768',
      '--model',
      '/opt/ml/model',
      '--tensor-parallel-size',
      '8',
    ]);
    expect(smVllmArgs(env, { 'tensor-parallel-size': '2' })).toContain('2');
    expect(smVllmArgs(env, { 'tensor-parallel-size': '2' })).not.toContain('8');
  });
});

/**
 * The DLC's rules, from aws/deep-learning-containers scripts/docker/vllm/sagemaker_args.py and
 * sagemaker_entrypoint.sh: a JSON array value gives one argument per element (so multi-value flags such as
 * --lora-modules work), except for the four flags vLLM takes whole; an empty array drops the flag; several JSON
 * objects give one argument each; the model comes from SM_VLLM_MODEL, else a non-empty /opt/ml/model, else
 * HF_MODEL_ID; the route middleware is added when its file is in the image.
 */
describe('when SM_VLLM_* values are JSON, as the DLC reads them', () => {
  it.each([
    ['lora-modules', '["a=/m/a", "b=/m/b"]', ['a=/m/a', 'b=/m/b']],
    [
      'lora-modules',
      '[{"name":"a","path":"/m/a"}, {"name":"b","path":"/m/b"}]',
      ['{"name":"a","path":"/m/a"}', '{"name":"b","path":"/m/b"}'],
    ],
    ['x', '[1, true, null, [2, 3]]', ['1', 'true', '', '[2,3]']],
    ['lora-modules', '[]', undefined],
    ['allowed-origins', '["https://a.example"]', ['["https://a.example"]']],
    ['middleware', '["m.A", "m.B"]', ['["m.A", "m.B"]']],
    ['lora-modules', '{"name":"a"} {"name":"b"}', ['{"name":"a"}', '{"name":"b"}']],
    ['compilation-config', '{"level": 3, "cudagraph_sizes": [1, 2]}', ['{"level": 3, "cudagraph_sizes": [1, 2]}']],
    ['x', '[not json]', ['[not json]']],
    ['x', '{"a": 1} trailing', ['{"a": 1} trailing']],
    ['enable-prefix-caching', 'TRUE', []],
    ['enable-prefix-caching', 'false', undefined],
    ['served-model-name', 'my model', ['my model']],
  ])('GIVEN --%s=%s THEN the arguments after the flag are %p', (flag, value, words) => {
    expect(smVllmValueWords(flag, value)).toEqual(words);
  });

  it('GIVEN a JSON array among the variables THEN the flag is followed by one argument per element, in name order', () => {
    expect(
      smVllmArgs({
        SM_VLLM_MODEL: 'm',
        SM_VLLM_LORA_MODULES: '["a=/a","b=/b"]',
        SM_VLLM_ENABLE_LORA: 'true',
        SM_VLLM_SERVED_MODEL_NAME: '[]',
      }),
    ).toEqual(['--enable-lora', '--lora-modules', 'a=/a', 'b=/b', '--model', 'm']);
  });

  it('GIVEN any list of plain strings THEN each becomes exactly one argument', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 5 }), (items) => {
        expect(smVllmValueWords('lora-modules', JSON.stringify(items))).toEqual(items);
      }),
    );
  });
});

describe('when the model is resolved the DLC way', () => {
  const withDir: DlcFiles = { modelDirHasFiles: true, routeMiddleware: false };
  it.each([
    [
      { SM_VLLM_MODEL: 'org/explicit', HF_MODEL_ID: 'org/hf' },
      withDir,
      { model: 'org/explicit', source: 'SM_VLLM_MODEL' },
    ],
    [{ HF_MODEL_ID: 'org/hf' }, withDir, { model: '/opt/ml/model', source: 'model-dir' }],
    [{ HF_MODEL_ID: 'org/hf' }, NO_DLC_FILES, { model: 'org/hf', source: 'HF_MODEL_ID' }],
    [{ SM_VLLM_MODEL: '', HF_MODEL_ID: '' }, NO_DLC_FILES, undefined],
  ])('GIVEN %p and %p THEN the model is %p', (env, files, expected) => {
    expect(resolveModel(env, files)).toEqual(expected);
  });

  it('GIVEN the model from /opt/ml/model or HF_MODEL_ID THEN --model follows --port, as in the DLC; the route middleware is appended when present', () => {
    expect(
      defaultEngineArgv({ HF_MODEL_ID: 'org/hf', SM_VLLM_MAX_MODEL_LEN: '4096' }, 8100, undefined, {
        modelDirHasFiles: false,
        routeMiddleware: true,
      }),
    ).toEqual([
      'python3',
      '-m',
      'vllm.entrypoints.openai.api_server',
      '--host',
      '127.0.0.1',
      '--port',
      '8100',
      '--model',
      'org/hf',
      '--max-model-len',
      '4096',
      '--middleware',
      'sagemaker_serve.SageMakerRouteMiddleware',
    ]);
    const [engine] = planEngines(parseContainerEnv({}).settings, gpus(1), [8100], { HF_MODEL_ID: 'org/hf' }, withDir);
    expect(engine.argv.slice(7, 9)).toEqual(['--model', '/opt/ml/model']);
  });
});

describe('when engines are planned', () => {
  const multi = (engines: number) =>
    parseContainerEnv({ PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: String(engines) }).settings;

  it('GIVEN 8 GPUs and 4 engines THEN each gets 2 disjoint GPUs, tensor-parallel size 2, its own port and CUDA_VISIBLE_DEVICES', () => {
    const plan = planEngines(multi(4), gpus(8), [8100, 8101, 8102, 8103], {
      SM_VLLM_MODEL: 'm',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '8',
    });
    expect(
      plan.map((e) => [e.name, e.port, e.gpuIds.join(','), e.tensorParallelSize, e.env.CUDA_VISIBLE_DEVICES, e.url]),
    ).toEqual([
      ['engine-0', 8100, '0,1', 2, '0,1', 'http://127.0.0.1:8100'],
      ['engine-1', 8101, '2,3', 2, '2,3', 'http://127.0.0.1:8101'],
      ['engine-2', 8102, '4,5', 2, '4,5', 'http://127.0.0.1:8102'],
      ['engine-3', 8103, '6,7', 2, '6,7', 'http://127.0.0.1:8103'],
    ]);
    const argv = plan[3].argv;
    expect(argv.slice(argv.indexOf('--tensor-parallel-size'), argv.indexOf('--tensor-parallel-size') + 2)).toEqual([
      '--tensor-parallel-size',
      '2',
    ]);
    expect(argv.slice(argv.indexOf('--port'), argv.indexOf('--port') + 2)).toEqual(['--port', '8103']);
  });

  it('GIVEN LoRA adapters in SM_VLLM_* THEN every engine of a multi-engine container serves all of them (the router then routes each adapter among them)', () => {
    const env = {
      SM_VLLM_MODEL: 'm',
      SM_VLLM_ENABLE_LORA: 'true',
      SM_VLLM_LORA_MODULES: '["sql=/opt/ml/adapters/sql","support=/opt/ml/adapters/support"]',
      SM_VLLM_MAX_LORAS: '2',
    };
    const plan = planEngines(multi(4), gpus(8), [8100, 8101, 8102, 8103], env, NO_DLC_FILES);
    for (const engine of plan) {
      const argv = engine.argv;
      expect(argv).toContain('--enable-lora');
      expect(argv.slice(argv.indexOf('--lora-modules'), argv.indexOf('--lora-modules') + 3)).toEqual([
        '--lora-modules',
        'sql=/opt/ml/adapters/sql',
        'support=/opt/ml/adapters/support',
      ]);
      expect(argv.slice(argv.indexOf('--max-loras'), argv.indexOf('--max-loras') + 2)).toEqual(['--max-loras', '2']);
    }
  });

  it("GIVEN sagemaker mode THEN one engine uses all GPUs and keeps the construct's tensor-parallel size", () => {
    const [engine] = planEngines(parseContainerEnv({}).settings, gpus(8, 'nvidia-smi'), [8100], {
      SM_VLLM_MODEL: 'm',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '4',
    });
    expect(engine.gpuIds).toHaveLength(8);
    expect(engine.argv.join(' ')).toContain('--tensor-parallel-size 4');
  });

  it('GIVEN detected GPUs that engines cannot share evenly, or the default engine without GPUs or model THEN it explains', () => {
    expect(() => planEngines(multi(3), gpus(8, 'nvidia-smi'), [1, 2, 3], { SM_VLLM_MODEL: 'm' })).toThrow(
      'PREFIX_ROUTER_ENGINES must divide the 8 GPUs found (nvidia-smi) so every engine gets the same number (got 3)',
    );
    let error: ContainerConfigError | undefined;
    try {
      planEngines(
        parseContainerEnv({}).settings,
        { ids: [], source: 'none', note: 'nvidia-smi -L failed: ENOENT' },
        [8100],
        {},
        NO_DLC_FILES,
      );
    } catch (err) {
      error = err as ContainerConfigError;
    }
    expect(error?.problems).toEqual([
      'the default engine (vLLM) needs GPUs, but none were found (nvidia-smi -L failed: ENOENT); set PREFIX_ROUTER_GPUS, or PREFIX_ROUTER_ENGINE_COMMAND for an engine without GPUs (got 0 GPUs)',
      'the default engine (vLLM) needs a model: set SM_VLLM_MODEL or HF_MODEL_ID, or put the model in /opt/ml/model (got none of them)',
    ]);
  });

  it('GIVEN a tensor-parallel size that multi-engine mode replaces THEN it warns, unless it is the share (what the construct renders)', () => {
    expect(enginePlanWarnings(multi(4), gpus(8), { SM_VLLM_TENSOR_PARALLEL_SIZE: '4' })).toEqual([
      'SM_VLLM_TENSOR_PARALLEL_SIZE=4 is replaced in multi-engine mode: each of the 4 engines gets 2 of the 8 GPUs and --tensor-parallel-size 2',
    ]);
    expect(enginePlanWarnings(multi(4), gpus(8), { SM_VLLM_TENSOR_PARALLEL_SIZE: '8' })).toEqual([
      'SM_VLLM_TENSOR_PARALLEL_SIZE=8 is replaced in multi-engine mode: each of the 4 engines gets 2 of the 8 GPUs and --tensor-parallel-size 2',
    ]);
    expect(enginePlanWarnings(multi(4), gpus(8), { SM_VLLM_TENSOR_PARALLEL_SIZE: '2' })).toEqual([]);
    expect(enginePlanWarnings(parseContainerEnv({}).settings, gpus(8), { SM_VLLM_TENSOR_PARALLEL_SIZE: '4' })).toEqual(
      [],
    );
  });

  it('GIVEN a custom command and no GPUs THEN engines start without CUDA_VISIBLE_DEVICES', () => {
    const settings = parseContainerEnv({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '2',
      PREFIX_ROUTER_ENGINE_COMMAND: 'emu --port {port} --gpus "{gpus}"',
    }).settings;
    const plan = planEngines(settings, gpus(0, 'none'), [9000, 9001], {});
    expect(plan.map((e) => e.argv)).toEqual([
      ['emu', '--port', '9000', '--gpus', ''],
      ['emu', '--port', '9001', '--gpus', ''],
    ]);
    expect(plan[0].env).toEqual({});
  });
});

describe('when GPUs are counted', () => {
  it('GIVEN nvidia-smi -L output THEN each GPU line counts once', () => {
    const out =
      'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)\n  MIG 1g.10gb Device 0: (UUID: MIG-1)\n';
    expect(countNvidiaSmiGpus(out)).toBe(2);
    expect(countNvidiaSmiGpus('')).toBe(0);
  });

  it('GIVEN CUDA_VISIBLE_DEVICES from the host THEN its ids are handed out; PREFIX_ROUTER_GPUS takes the first of them', async () => {
    expect(await detectGpus(undefined, { CUDA_VISIBLE_DEVICES: '4,5,6,7' })).toEqual({
      ids: ['4', '5', '6', '7'],
      source: 'CUDA_VISIBLE_DEVICES',
    });
    expect(await detectGpus(2, { CUDA_VISIBLE_DEVICES: '4,5,6,7' })).toEqual({
      ids: ['4', '5'],
      source: 'PREFIX_ROUTER_GPUS',
    });
    expect(await detectGpus(2, {})).toEqual({ ids: ['0', '1'], source: 'PREFIX_ROUTER_GPUS' });
  });
});
