/**
 * The vLLM emulator: one engine model behind vLLM's OpenAI-compatible HTTP API (node:http), paced against the
 * wall clock by `timeScale`. Routes: POST /v1/chat/completions, /v1/completions, /invocations (SageMaker; the
 * body's shape picks chat or completion), /tokenize, /detokenize; GET /v1/models, /health, /version, /metrics;
 * GET or POST /ping (SageMaker; vLLM answers both). Streaming
 * answers are SSE with one chunk per generated token as the engine produces it; a client that goes away
 * cancels its request in the engine. Prompts are never logged.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { SeededRng } from '../common/seeded-rng';
import { chatTemplate } from './chat-template';
import {
  chatMessagesOf,
  parseChatRequest,
  parseCompletionRequest,
  parseInvocationRequest,
  parseJsonObject,
  type CompletionRequest,
} from './completion-request';
import { chunkEvent, completionBody, DONE_EVENT, usageEvent, usageOf, type ResponseMeta } from './completion-response';
import { EngineDriver } from './engine-driver';
import { EngineModel, EngineRequestError, type EngineEvent, type SubmittedRequest } from './engine-model';
import { resolveProfile, type EngineProfile } from './engine-profile';
import { EmulatorHttpError, badRequest } from './emulator-errors';
import { EmulatorMetrics } from './emulator-metrics';
import { EmulatorTokenizer } from './emulator-tokens';
import { outputText, outputToken } from './output-text';
import { checkLoraModules, DEFAULT_MAX_LORAS, type LoraModule } from './lora-modules';
import { emulatorBlockTokenIds, KvEventRecorder } from './kv-event-recorder';
import { KV_WIRE_ENCODINGS, type KvWireEncoding } from '../kv-events/kv-event-codec';
import { DEFAULT_KV_BUFFER_STEPS, KvEventPublisher } from '../kv-events/kv-event-publisher';
import { tcpEndpoint } from '../kv-events/zmq-endpoint';

/**
 * Publishing the engine's KV cache events as vLLM does with `--kv-events-config '{"enable_kv_cache_events": true,
 * "publisher": "zmq", ...}'`: a PUB socket (and optionally a replay ROUTER socket) bound on 127.0.0.1.
 */
export interface EmulatorKvEventsOptions {
  /** The PUB socket's port on 127.0.0.1; 0 picks a free one (RunningEmulator.kvEvents says which). */
  readonly port: number;
  /** The replay (ROUTER) socket's port on 127.0.0.1, 0 = a free one; none without it. */
  readonly replayPort?: number;
  /**
   * The PUB socket's endpoint as vLLM's `--kv-events-config` gives it (`ipc://PATH`, or tcp on loopback), instead of
   * `port`; a single instance only (vLLM offsets a shared endpoint per data-parallel rank, a fleet here does not).
   */
  readonly endpoint?: string;
  /** The replay socket's endpoint, instead of `replayPort`. */
  readonly replayEndpoint?: string;
  /** `map` (current vLLM, default) or `positional` (vLLM to v0.23), for the batch and its events. */
  readonly encoding?: KvWireEncoding;
  /** vLLM's `topic`; default "". */
  readonly topic?: string;
  /** Batches kept for replay (vLLM's `buffer_steps`); default 10,000. */
  readonly bufferSteps?: number;
}

/** Where a running emulator publishes its KV events. */
export interface EmulatorKvEventsEndpoints {
  readonly endpoint: string;
  readonly replayEndpoint?: string;
}

/** The one host KV events bind on: they carry token ids, i.e. prompts (docs/security.md). */
const KV_EVENTS_HOST = '127.0.0.1';

export interface EmulatorOptions {
  /** A profile, or a built-in profile name, or a path to a profile JSON file. Default p5-llama-3.1-70b. */
  readonly profile?: EngineProfile | string;
  /** TCP port; 0 (default) picks a free one. */
  readonly port?: number;
  /** Interface to listen on; default 127.0.0.1. */
  readonly host?: string;
  /** Virtual ms per wall ms: 10 runs the modelled hardware ten times faster than real time. Default 1. */
  readonly timeScale?: number;
  /** Model name served and accepted in `model`; default the profile's modelName. */
  readonly modelName?: string;
  /** Seed for response ids (the engine itself is deterministic). Default 0. */
  readonly seed?: number;
  /** Largest request body accepted, in bytes; default 16 MiB. */
  readonly maxBodyBytes?: number;
  /** Optional pino logger: one line per finished or refused request, never the prompt. */
  readonly logger?: Logger;
  /**
   * LoRA adapters served beside the base model (vLLM `--enable-lora --lora-modules`): a request names one in
   * `model`; each adapter's prompts are cached apart from the base model's and every other adapter's.
   */
  readonly loraModules?: readonly LoraModule[];
  /** vLLM `--max-loras` (reported in `vllm:lora_requests_info`); default 1. */
  readonly maxLoras?: number;
  /**
   * vLLM's VLLM_ALLOW_RUNTIME_LORA_UPDATING: POST /v1/load_lora_adapter and /v1/unload_lora_adapter add and remove
   * adapters while the server runs (https://docs.vllm.ai/en/latest/features/lora/). Default false (the routes are 404).
   */
  readonly allowRuntimeLoraUpdating?: boolean;
  /**
   * vLLM's VLLM_SERVER_DEV_MODE: POST /reset_prefix_cache empties the engine's prefix cache when no request runs
   * (vllm/entrypoints/serve/cache/api_router.py at vllm-project/vllm@09cb327f). Default false (the route is 404).
   */
  readonly serverDevMode?: boolean;
  /** Publish the engine's KV cache events (vLLM's wire format); default none. */
  readonly kvEvents?: EmulatorKvEventsOptions;
}

export interface RunningEmulator {
  /** http://host:port */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  readonly modelName: string;
  /** Adapters served beside the base model now (empty without `loraModules`; changed by runtime loading). */
  readonly loraModules: readonly LoraModule[];
  readonly profile: EngineProfile;
  readonly timeScale: number;
  /** The engine model behind the server (read stats(), never drive it directly while the server runs). */
  readonly engine: EngineModel;
  /** Where its KV events are published, with `kvEvents`. */
  readonly kvEvents?: EmulatorKvEventsEndpoints;
  /** Stops accepting connections, ends in-flight responses, stops the engine clock. */
  close(): Promise<void>;
}

export interface RunningEmulatorFleet {
  readonly urls: readonly string[];
  readonly instances: readonly RunningEmulator[];
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

interface ResolvedOptions {
  readonly profile: EngineProfile;
  readonly port: number;
  readonly host: string;
  readonly timeScale: number;
  readonly modelName: string;
  readonly seed: number;
  readonly maxBodyBytes: number;
  readonly logger: Logger | undefined;
  readonly loraModules: readonly LoraModule[];
  /** undefined without adapters (vLLM exports vllm:lora_requests_info only with LoRA enabled). */
  readonly maxLoras: number | undefined;
  readonly allowRuntimeLoraUpdating: boolean;
  readonly serverDevMode: boolean;
  readonly kvEvents: EmulatorKvEventsOptions | undefined;
}

function checkPort(name: string, port: unknown): void {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new RangeError(`${name} must be an integer in [0, 65535], got ${String(port)}`);
}

function checkKvEventsOptions(kvEvents: EmulatorKvEventsOptions | undefined): void {
  if (kvEvents === undefined) return;
  checkPort('kvEvents.port', kvEvents.port);
  if (kvEvents.replayPort !== undefined) checkPort('kvEvents.replayPort', kvEvents.replayPort);
  if (kvEvents.encoding !== undefined && !KV_WIRE_ENCODINGS.includes(kvEvents.encoding))
    throw new RangeError(
      `kvEvents.encoding must be one of ${KV_WIRE_ENCODINGS.join(', ')}, got ${String(kvEvents.encoding)}`,
    );
  const steps = kvEvents.bufferSteps;
  if (steps !== undefined && (!Number.isSafeInteger(steps) || steps < 1 || steps > 1_000_000))
    throw new RangeError(`kvEvents.bufferSteps must be an integer in [1, 1000000], got ${String(steps)}`);
  if (kvEvents.topic !== undefined && typeof kvEvents.topic !== 'string')
    throw new RangeError('kvEvents.topic must be a string');
}

/** Validates options; errors name the option and its allowed range. */
export function resolveEmulatorOptions(options: EmulatorOptions = {}): ResolvedOptions {
  const profile =
    typeof options.profile === 'object' ? options.profile : resolveProfile(options.profile ?? 'p5-llama-3.1-70b');
  const port = options.port ?? 0;
  checkPort('port', port);
  checkKvEventsOptions(options.kvEvents);
  const timeScale = options.timeScale ?? 1;
  if (typeof timeScale !== 'number' || !Number.isFinite(timeScale) || timeScale <= 0 || timeScale > 1_000_000) {
    throw new RangeError(`timeScale must be a number in (0, 1000000], got ${String(timeScale)}`);
  }
  const seed = options.seed ?? 0;
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${String(seed)}`);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1024)
    throw new RangeError(`maxBodyBytes must be an integer >= 1024, got ${String(maxBodyBytes)}`);
  const modelName = options.modelName ?? profile.modelName;
  if (typeof modelName !== 'string' || modelName === '') throw new RangeError('modelName must be a non-empty string');
  const loraModules = options.loraModules ?? [];
  checkLoraModules(loraModules, modelName);
  const maxLoras = options.maxLoras ?? DEFAULT_MAX_LORAS;
  if (!Number.isInteger(maxLoras) || maxLoras < 1)
    throw new RangeError(`maxLoras must be an integer >= 1, got ${String(maxLoras)}`);
  return {
    profile,
    port,
    host: options.host ?? '127.0.0.1',
    timeScale,
    modelName,
    seed,
    maxBodyBytes,
    logger: options.logger,
    loraModules,
    maxLoras:
      loraModules.length > 0 || options.maxLoras !== undefined || options.allowRuntimeLoraUpdating === true
        ? maxLoras
        : undefined,
    allowRuntimeLoraUpdating: options.allowRuntimeLoraUpdating === true,
    serverDevMode: options.serverDevMode === true,
    kvEvents: options.kvEvents,
  };
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new EmulatorHttpError(413, `request body of ${declared} bytes is larger than the ${limit}-byte limit`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new EmulatorHttpError(413, `request body is larger than the ${limit}-byte limit`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

const ROUTES: Readonly<Record<string, readonly string[]>> = {
  '/v1/chat/completions': ['POST'],
  '/v1/completions': ['POST'],
  '/invocations': ['POST'],
  '/tokenize': ['POST'],
  '/detokenize': ['POST'],
  '/v1/models': ['GET'],
  '/v1/load_lora_adapter': ['POST'],
  '/v1/unload_lora_adapter': ['POST'],
  '/reset_prefix_cache': ['POST'],
  '/health': ['GET'],
  '/ping': ['GET', 'POST'],
  '/version': ['GET'],
  '/metrics': ['GET'],
};

/** The vLLM release whose HTTP API and metric families the emulator follows (GET /version). */
export const EMULATED_VLLM_VERSION = '0.11.0';

/** Writes to the response, the tokens of one timer tick in one socket write. */
function corkedWriter(res: ServerResponse): (text: string) => void {
  let corked = false;
  return (text: string): void => {
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(() => {
        corked = false;
        res.uncork();
      });
    }
    res.write(text);
  };
}

class EmulatorServer {
  readonly engine: EngineModel;
  readonly driver: EngineDriver;
  readonly metrics: EmulatorMetrics;
  private readonly rng: SeededRng;
  private readonly tokenizer = new EmulatorTokenizer();
  private readonly open = new Set<ServerResponse>();
  private nextId = 0;
  private closing = false;
  /** The adapters served now, in the order they were added. */
  readonly adapters: Map<string, LoraModule>;

  /** Gathers each step's cache changes into one KV event batch, with `kvEvents`. */
  private readonly kvEvents: KvEventRecorder | undefined;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly publisher?: KvEventPublisher,
  ) {
    this.kvEvents =
      publisher === undefined
        ? undefined
        : new KvEventRecorder(
            emulatorBlockTokenIds(this.tokenizer, options.profile.blockTokens),
            options.profile.blockTokens,
            (events) => publisher.publish(events),
          );
    this.engine = new EngineModel(options.profile, {
      tokenEvents: true,
      onStep: (step) => {
        this.metrics.observeStep(step);
        this.kvEvents?.flush();
      },
      ...(this.kvEvents === undefined ? {} : { cacheListener: this.kvEvents }),
    });
    // A new engine's cache is empty: say so first, so a subscriber that was told otherwise starts over.
    this.kvEvents?.cleared();
    this.kvEvents?.flush();
    this.metrics = new EmulatorMetrics(this.engine, options.modelName, options.profile, options.maxLoras);
    this.driver = new EngineDriver(this.engine, {
      timeScale: options.timeScale,
      onEvent: (e) => this.metrics.observe(e),
    });
    this.rng = new SeededRng(options.seed);
    this.adapters = new Map(options.loraModules.map((m) => [m.name, m]));
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.route(req, res).catch((err: unknown) => this.fail(res, err));
  }

  async closeAll(): Promise<void> {
    this.closing = true;
    this.driver.close();
    for (const res of this.open) res.destroy();
    this.open.clear();
    await this.publisher?.close();
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    const methods = ROUTES[path];
    if (methods === undefined) throw new EmulatorHttpError(404, `no route for ${req.method} ${path}`);
    const method = req.method === 'HEAD' && methods.includes('GET') ? 'GET' : (req.method ?? '');
    if (!methods.includes(method)) {
      throw new EmulatorHttpError(405, `${path} takes ${methods.join(' or ')}, not ${req.method}`, null, {
        allow: methods.join(', '),
      });
    }
    switch (path) {
      case '/health':
      case '/ping':
        res.writeHead(200, { 'content-length': 0 });
        res.end();
        return;
      case '/v1/models':
        this.sendModels(res);
        return;
      case '/v1/load_lora_adapter':
      case '/v1/unload_lora_adapter':
        await this.updateLoraAdapters(req, res, path);
        return;
      case '/reset_prefix_cache':
        this.resetPrefixCache(req, res, path);
        return;
      case '/version':
        sendJson(res, 200, { version: EMULATED_VLLM_VERSION });
        return;
      case '/tokenize':
      case '/detokenize': {
        const body = parseJsonObject(await readBody(req, this.options.maxBodyBytes));
        if (body.model !== undefined && body.model !== null)
          this.adapterOf(typeof body.model === 'string' ? body.model : JSON.stringify(body.model));
        sendJson(res, 200, path === '/tokenize' ? this.tokenize(body) : this.detokenize(body));
        return;
      }
      case '/metrics': {
        const text = await this.metrics.text();
        res.writeHead(200, { 'content-type': this.metrics.contentType() });
        res.end(text);
        return;
      }
      default: {
        const body = parseJsonObject(await readBody(req, this.options.maxBodyBytes));
        const request =
          path === '/v1/chat/completions'
            ? parseChatRequest(body)
            : path === '/v1/completions'
              ? parseCompletionRequest(body)
              : parseInvocationRequest(body);
        this.complete(request, res);
      }
    }
  }

  /** vLLM's model list: the base model, then each adapter with its path as root and its base model as parent. */
  private sendModels(res: ServerResponse): void {
    const created = Math.floor(Date.now() / 1000);
    sendJson(res, 200, {
      object: 'list',
      data: [
        {
          id: this.options.modelName,
          object: 'model',
          created,
          owned_by: 'vllm',
          root: this.options.modelName,
          parent: null,
          max_model_len: this.options.profile.maxModelLen,
        },
        ...[...this.adapters.values()].map((m) => ({
          id: m.name,
          object: 'model',
          created,
          owned_by: 'vllm',
          root: m.path,
          parent: m.baseModelName ?? this.options.modelName,
          max_model_len: null,
        })),
      ],
    });
  }

  /**
   * vLLM's dev-mode POST /reset_prefix_cache: answered 200 whether or not the cache could be emptied (vLLM does not
   * check either; its block pool refuses while requests hold blocks). An emptied cache publishes AllBlocksCleared.
   */
  private resetPrefixCache(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (!this.options.serverDevMode) throw new EmulatorHttpError(404, `no route for ${req.method} ${path}`);
    const reset = this.engine.resetPrefixCache();
    this.kvEvents?.flush();
    this.options.logger?.info({ reset }, reset ? 'prefix cache reset' : 'prefix cache not reset: requests in flight');
    req.resume();
    res.writeHead(200, { 'content-length': 0 });
    res.end();
  }

  /** vLLM's runtime LoRA endpoints (VLLM_ALLOW_RUNTIME_LORA_UPDATING): load or unload one adapter by name. */
  private async updateLoraAdapters(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (!this.options.allowRuntimeLoraUpdating) throw new EmulatorHttpError(404, `no route for ${req.method} ${path}`);
    const body = parseJsonObject(await readBody(req, this.options.maxBodyBytes));
    const name = body.lora_name;
    if (typeof name !== 'string' || name === '') throw badRequest('lora_name must be a non-empty string', 'lora_name');
    if (path === '/v1/load_lora_adapter') {
      if (typeof body.lora_path !== 'string' || body.lora_path === '')
        throw badRequest('lora_path must be a non-empty string', 'lora_path');
      if (this.adapters.has(name) || name === this.options.modelName)
        throw badRequest(`The lora adapter '${name}' has already been loaded.`, 'lora_name');
      this.adapters.set(name, { name, path: body.lora_path });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`Success: LoRA adapter '${name}' added successfully.`);
    } else {
      if (!this.adapters.delete(name))
        throw new EmulatorHttpError(404, `The lora adapter '${name}' cannot be found.`, 'lora_name');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`Success: LoRA adapter '${name}' removed successfully.`);
    }
  }

  private complete(request: CompletionRequest, res: ServerResponse): void {
    if (this.closing) throw new EmulatorHttpError(503, 'the emulator is shutting down');
    const adapter = request.model === undefined ? undefined : this.adapterOf(request.model);
    const engineId = String(this.nextId++);
    const meta: ResponseMeta = {
      id: `${request.kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${this.randomHex()}`,
      created: Math.floor(Date.now() / 1000),
      // vLLM answers with the name the request used: the adapter's, when it ran with one.
      model: adapter?.name ?? this.options.modelName,
    };
    const answer = { done: false };
    let submitted: SubmittedRequest;
    const listener = this.answerListener(request, meta, res, answer, () => submitted.promptTokens);
    submitted = this.submitToEngine(request, engineId, adapter, listener);
    this.open.add(res);
    res.on('close', () => {
      if (answer.done) return;
      answer.done = true;
      this.open.delete(res);
      this.driver.abort(engineId);
      // An abort outside a step caches the request's full blocks: publish them now, not with the next step.
      this.kvEvents?.flush();
      this.metrics.forget(engineId);
      this.options.logger?.info(
        { id: meta.id, kind: request.kind, promptTokens: submitted.promptTokens },
        'client went away; request aborted',
      );
    });
    if (request.stream) {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        connection: 'keep-alive',
      });
      res.flushHeaders();
    }
  }

  /** Answers the request from its engine events: SSE chunks as tokens come, or one body when it finishes. */
  private answerListener(
    request: CompletionRequest,
    meta: ResponseMeta,
    res: ServerResponse,
    answer: { done: boolean },
    promptTokens: () => number,
  ): (event: EngineEvent) => void {
    const write = corkedWriter(res);
    return (event: EngineEvent): void => {
      if (answer.done) return;
      if (request.stream) {
        if (event.type === 'token') {
          if (event.outputTokens === 1 && request.kind === 'chat')
            write(chunkEvent('chat', meta, { role: 'assistant', text: '' }, request.includeUsage));
          write(chunkEvent(request.kind, meta, { text: outputToken(event.outputTokens - 1) }, request.includeUsage));
        } else if (event.type === 'finished') {
          write(
            chunkEvent(
              request.kind,
              meta,
              { ...(request.kind === 'chat' ? {} : { text: '' }), finishReason: 'length' },
              request.includeUsage,
            ),
          );
          if (request.includeUsage)
            write(usageEvent(request.kind, meta, usageOf(promptTokens(), event.outputTokens, event.cachedTokens)));
          write(DONE_EVENT);
          answer.done = true;
          this.open.delete(res);
          res.end();
          this.log(meta.id, request, event);
        }
      } else if (event.type === 'finished') {
        answer.done = true;
        this.open.delete(res);
        sendJson(
          res,
          200,
          completionBody(
            request.kind,
            meta,
            outputText(event.outputTokens),
            usageOf(promptTokens(), event.outputTokens, event.cachedTokens),
          ),
        );
        this.log(meta.id, request, event);
      }
    };
  }

  /** Hands the request to the engine; a request vLLM would refuse gets the same 400. */
  private submitToEngine(
    request: CompletionRequest,
    engineId: string,
    adapter: LoraModule | undefined,
    listener: (event: EngineEvent) => void,
  ): SubmittedRequest {
    const priority = request.priority ?? 0;
    if (priority !== 0 && this.options.profile.schedulingPolicy !== 'priority')
      // vLLM's input processor refuses it the same way (ValueError → 400).
      throw badRequest(`Got priority ${priority} but Priority scheduling is not enabled.`, 'priority');
    try {
      const submitted = this.driver.submit(
        {
          id: engineId,
          promptText: request.promptText,
          maxTokens: request.maxTokens,
          cacheSalt: request.cacheSalt,
          priority,
          ...(adapter !== undefined ? { loraName: adapter.name } : {}),
        },
        listener,
      );
      this.metrics.started(engineId, adapter?.name);
      return submitted;
    } catch (err) {
      if (err instanceof EngineRequestError)
        throw badRequest(
          err.message,
          err.code === 'invalid-max-tokens' || err.code === 'max-tokens-too-large' ? 'max_tokens' : null,
        );
      throw err;
    }
  }

  private log(id: string, request: CompletionRequest, event: EngineEvent): void {
    if (event.type !== 'finished' || !this.options.logger) return;
    this.options.logger.info(
      {
        id,
        kind: request.kind,
        stream: request.stream,
        promptTokens: event.promptTokens,
        cachedTokens: event.cachedTokens,
        outputTokens: event.outputTokens,
        ttftMs: Math.round(event.ttftMs),
        e2eMs: Math.round(event.e2eMs),
        preemptions: event.preemptions,
      },
      'request finished',
    );
  }

  private fail(res: ServerResponse, err: unknown): void {
    const error =
      err instanceof EmulatorHttpError
        ? err
        : new EmulatorHttpError(500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
    if (error.status >= 500) this.options.logger?.error({ err }, 'emulator error');
    else this.options.logger?.info({ status: error.status, message: error.message }, 'request refused');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendJson(res, error.status, error.body(), { ...error.headers });
  }

  /** vLLM's POST /tokenize: `prompt` (completion) or `messages` (chat template, add_generation_prompt default true). */
  private tokenize(body: Record<string, unknown>): {
    count: number;
    max_model_len: number;
    tokens: number[];
    token_strs: null;
  } {
    let text: string;
    if (body.messages !== undefined) {
      const add = body.add_generation_prompt;
      if (add !== undefined && typeof add !== 'boolean')
        throw badRequest('add_generation_prompt must be a boolean', 'add_generation_prompt');
      text = chatTemplate(chatMessagesOf(body), { addGenerationPrompt: add !== false });
    } else if (typeof body.prompt === 'string') {
      text = body.prompt;
    } else {
      throw badRequest('tokenize takes a string prompt or a messages array', 'prompt');
    }
    const tokens = this.tokenizer.tokenize(text);
    return { count: tokens.length, max_model_len: this.options.profile.maxModelLen, tokens, token_strs: null };
  }

  /** vLLM's POST /detokenize: token ids back to text. */
  private detokenize(body: Record<string, unknown>): { prompt: string } {
    if (!Array.isArray(body.tokens)) throw badRequest('tokens must be an array of token ids', 'tokens');
    return { prompt: this.tokenizer.detokenize(body.tokens) };
  }

  /**
   * The adapter a request's `model` names: undefined for the base model, else one of loraModules; any other name
   * is vLLM's 404 (`The model \`x\` does not exist.`, param `model`).
   */
  private adapterOf(model: string): LoraModule | undefined {
    if (model === this.options.modelName) return undefined;
    const adapter = this.adapters.get(model);
    if (adapter === undefined) throw new EmulatorHttpError(404, `The model \`${model}\` does not exist.`, 'model');
    return adapter;
  }

  private randomHex(): string {
    let hex = '';
    for (let i = 0; i < 4; i++)
      hex += Math.floor(this.rng.next() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    return hex;
  }
}

/** Starts one emulated vLLM instance. */
/** Binds the KV event sockets the options ask for (none without `kvEvents`). */
async function bindKvEvents(kvEvents: EmulatorKvEventsOptions | undefined): Promise<KvEventPublisher | undefined> {
  if (kvEvents === undefined) return undefined;
  const replayEndpoint =
    kvEvents.replayEndpoint ??
    (kvEvents.replayPort === undefined ? undefined : tcpEndpoint(KV_EVENTS_HOST, kvEvents.replayPort));
  return KvEventPublisher.bind({
    endpoint: kvEvents.endpoint ?? tcpEndpoint(KV_EVENTS_HOST, kvEvents.port),
    ...(replayEndpoint === undefined ? {} : { replayEndpoint }),
    bufferSteps: kvEvents.bufferSteps ?? DEFAULT_KV_BUFFER_STEPS,
    topic: kvEvents.topic ?? '',
    encoding: { batch: kvEvents.encoding ?? 'map', events: kvEvents.encoding ?? 'map' },
  });
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const resolved = resolveEmulatorOptions(options);
  const publisher = await bindKvEvents(resolved.kvEvents);
  const emulator = new EmulatorServer(resolved, publisher);
  const server: Server = createServer((req, res) => emulator.handle(req, res));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(resolved.port, resolved.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await emulator.closeAll();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const hostForUrl = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${hostForUrl}:${port}`,
    port,
    host: resolved.host,
    modelName: resolved.modelName,
    get loraModules() {
      return [...emulator.adapters.values()];
    },
    profile: resolved.profile,
    timeScale: resolved.timeScale,
    engine: emulator.engine,
    ...(publisher === undefined
      ? {}
      : {
          kvEvents: {
            endpoint: publisher.endpoint,
            ...(publisher.replayEndpoint === undefined ? {} : { replayEndpoint: publisher.replayEndpoint }),
          },
        }),
    close: () => {
      closed ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        await emulator.closeAll();
        server.closeAllConnections();
        await stopped;
      })();
      return closed;
    },
  };
}

/**
 * Starts `count` independent instances. With `options.port` > 0 they listen on consecutive ports from it;
 * with 0 (default) each gets a free port. If one fails to start, the others are closed and the error thrown.
 */
/** A fleet's options: one set for every instance, and optionally a profile per instance (a mixed fleet). */
export interface EmulatorFleetOptions extends EmulatorOptions {
  /** Instance i runs profiles[i] (`count` entries); default every instance runs `profile`. */
  readonly profiles?: readonly (EngineProfile | string)[];
}

/** Instance i's KV event ports: the fleet's plus i (as vLLM offsets them by data-parallel rank); 0 stays 0. */
function kvEventsOfInstance(kvEvents: EmulatorKvEventsOptions, i: number): EmulatorKvEventsOptions {
  const offset = (port: number): number => (port > 0 ? port + i : 0);
  return {
    ...kvEvents,
    port: offset(kvEvents.port),
    ...(kvEvents.replayPort === undefined ? {} : { replayPort: offset(kvEvents.replayPort) }),
  };
}

export async function startEmulatorFleet(
  count: number,
  options: EmulatorFleetOptions = {},
): Promise<RunningEmulatorFleet> {
  if (!Number.isInteger(count) || count < 1 || count > 256)
    throw new RangeError(`instances must be an integer in [1, 256], got ${String(count)}`);
  if (options.profiles !== undefined && options.profiles.length !== count)
    throw new RangeError(`profiles must list ${count} profiles, one per instance (got ${options.profiles.length})`);
  if (count > 1 && (options.kvEvents?.endpoint !== undefined || options.kvEvents?.replayEndpoint !== undefined))
    throw new RangeError(
      `kvEvents.endpoint and kvEvents.replayEndpoint name one instance's sockets; with ${count} instances give ports`,
    );
  const base = options.port ?? 0;
  if (base > 0 && base + count - 1 > 65535) {
    throw new RangeError(
      `ports ${base}..${base + count - 1} do not fit: the base port must be <= ${65536 - count} for ${count} instances`,
    );
  }
  const instances: RunningEmulator[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const { profiles, ...shared } = options;
      instances.push(
        await startEmulator({
          ...shared,
          ...(profiles !== undefined ? { profile: profiles[i] } : {}),
          port: base > 0 ? base + i : 0,
          seed: (options.seed ?? 0) + i,
          ...(shared.kvEvents === undefined ? {} : { kvEvents: kvEventsOfInstance(shared.kvEvents, i) }),
        }),
      );
    }
  } catch (err) {
    await Promise.all(instances.map((instance) => instance.close()));
    throw err;
  }
  return {
    urls: instances.map((instance) => instance.url),
    instances,
    close: async () => {
      await Promise.all(instances.map((instance) => instance.close()));
    },
  };
}
