import { availableParallelism } from 'node:os';
import {
  isMainThread,
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  workerData,
  type MessagePort,
} from 'node:worker_threads';
import { requestPreparer, type PrepareSettings, type PreparedRequest, type PromptSource } from './prompt-source';
import { isLatin1 } from '../common/latin1';
import type { RoutingRequest } from '../protocol/routing-request';
import { parseWorkloadSpec, type Workload } from '../workload';

/**
 * A prompt source whose work — generating the workload's text, parsing it as the router would and hashing
 * its prompts' blocks, about half of a long-context simulation's CPU — runs on a worker thread ahead of the
 * simulation, so a second core does it while this one simulates. The simulation stays synchronous: it takes
 * batches with `receiveMessageOnPort` and sleeps in `Atomics.wait` only when the worker is behind. The worker
 * rebuilds the workload from its canonical spec (which reproduces the same requests by construction) and stays
 * at most MAX_AHEAD batches ahead, each of at most BATCH_REQUESTS requests or BATCH_CHARS characters of routing
 * text, so memory stays bounded whatever the prompt lengths. Same prepared requests as `inlinePromptSource`;
 * only the routing text crosses to this thread, not the prompt.
 *
 * Memory (bench:fleet, 112 instances): a routing text that fits in Latin-1 (synthetic and trace text always
 * do) crosses as bytes in one transferred buffer per batch and becomes a string only while a policy reads it
 * (`latin1RoutingRequest`). As strings, the texts of requests in flight outlived young-generation collections
 * and piled up in the old generation until a full collection, a few hundred MB at a time; as bytes they are
 * external memory, which V8 collects by its own, smaller, allowance.
 */
const ROLE = 'prefix-router-prompt-worker';

/** Requests per message: enough to make messaging cheap, few enough that the first batch comes quickly. */
const BATCH_REQUESTS = 64;
/** A batch also ends at this many characters of routing text (a trace's 128k-token prompts are 512 KB each). */
const BATCH_CHARS = 4_000_000;
/** Batches the worker may be ahead of the simulation. */
const MAX_AHEAD = 8;
/** A worker that sends nothing for this long has died (it produces a batch in milliseconds). */
const STALL_MS = 120_000;
/** How long each side sleeps at most between checks of the other's state. */
const WAIT_SLICE_MS = 200;

// Control words in shared memory.
const PRODUCED = 0;
const CONSUMED = 1;
const STOP = 2;

/** A prepared request as sent: when `latin1Chars` is set, its routing text is the batch's next that many bytes. */
interface WireRequest {
  request: PreparedRequest;
  latin1Chars?: number;
}

type WorkerMessage =
  | { readonly kind: 'batch'; readonly items: WireRequest[]; readonly latin1: ArrayBuffer | undefined }
  | { readonly kind: 'end' }
  | { readonly kind: 'failed'; readonly message: string };

interface WorkerSettings extends PrepareSettings {
  readonly role: typeof ROLE;
  readonly spec: string;
  readonly control: SharedArrayBuffer;
  readonly port: MessagePort;
}

/**
 * The worker's heap limit. Its live data is bounded by construction (text caches of ≤ 32 M characters, one
 * batch being built; the hash memo and the batches are outside the heap), far below this. Setting a limit at
 * all matters: V8 lets a heap grow by a larger factor between full collections the larger its limit, and the
 * default follows the machine's memory. Measured with bench:fleet at 112 instances: 110 MB less RSS, same speed.
 */
const WORKER_MAX_OLD_GENERATION_MB = 512;

/** Below this many requests a run is over before a worker would pay for its start. */
const MIN_REQUESTS_FOR_WORKER = 2_000;

/**
 * Whether runs should prepare prompts on a worker: only when a core would otherwise sit idle (fewer
 * simulations at once than cores) and the workload is long enough to gain from it.
 */
export function promptWorkerPays(
  concurrentRuns: number,
  expectedRequests: number,
  cores = availableParallelism(),
): boolean {
  return concurrentRuns < cores && expectedRequests >= MIN_REQUESTS_FOR_WORKER;
}

/** The worker thread that prepares `workload`'s prompts, told where to post them and how to pace itself. */
function spawnPromptWorker(
  workload: Workload,
  settings: PrepareSettings,
  control: SharedArrayBuffer,
  port: MessagePort,
): Worker {
  // Under ts-node or ts-jest this module is TypeScript: the worker then loads it through ts-node.
  const typescript = __filename.endsWith('.ts');
  const worker = new Worker(__filename, {
    workerData: {
      role: ROLE,
      spec: workload.spec,
      blockTokens: settings.blockTokens,
      model: settings.model,
      control,
      port,
    } satisfies WorkerSettings,
    transferList: [port],
    resourceLimits: { maxOldGenerationSizeMb: WORKER_MAX_OLD_GENERATION_MB },
    execArgv: typescript ? ['--require', 'ts-node/register/transpile-only'] : [],
  });
  worker.unref();
  // A crash the worker could not report (it reports its own errors) surfaces as a stall (startPromptWorker's receive).
  worker.on('error', () => undefined);
  return worker;
}

export function startPromptWorker(workload: Workload, settings: PrepareSettings): PromptSource {
  const control = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
  const ctl = new Int32Array(control);
  const { port1, port2 } = new MessageChannel();
  const worker = spawnPromptWorker(workload, settings, control, port2);
  let closed = false;

  function close(): void {
    if (closed) return;
    closed = true;
    Atomics.store(ctl, STOP, 1);
    Atomics.notify(ctl, CONSUMED);
    port1.close();
    void worker.terminate();
  }

  /** The next message, waiting for the worker when it is behind. */
  function receive(): WorkerMessage {
    let waitedMs = 0;
    for (;;) {
      const produced = Atomics.load(ctl, PRODUCED);
      const received = receiveMessageOnPort(port1);
      if (received !== undefined) {
        Atomics.add(ctl, CONSUMED, 1);
        Atomics.notify(ctl, CONSUMED);
        return received.message as WorkerMessage;
      }
      if (waitedMs >= STALL_MS) {
        close();
        throw new Error(`the prompt worker sent nothing for ${STALL_MS / 1000} s; it has stopped (out of memory?)`);
      }
      const t0 = Date.now();
      Atomics.wait(ctl, PRODUCED, produced, WAIT_SLICE_MS);
      waitedMs += Date.now() - t0;
    }
  }

  function* requests(): Generator<PreparedRequest, void, undefined> {
    try {
      for (;;) {
        const message = receive();
        if (message.kind === 'end') return;
        if (message.kind === 'failed') throw new Error(`prompt worker: ${message.message}`);
        const latin1 = message.latin1 === undefined ? undefined : Buffer.from(message.latin1);
        let at = 0;
        for (const item of message.items) {
          const chars = item.latin1Chars;
          if (chars !== undefined) {
            item.request = {
              ...item.request,
              routing: latin1RoutingRequest(item.request.routing, latin1!.subarray(at, at + chars)),
            };
            at += chars;
          }
          yield item.request;
        }
      }
    } finally {
      close();
    }
  }

  let started = false;
  return {
    requests: {
      [Symbol.iterator]: () => {
        if (started) throw new Error('a worker prompt source can be iterated once');
        started = true;
        return requests();
      },
    },
    close,
  };
}

/** Worker side: generate, hash, post in batches, never more than MAX_AHEAD batches ahead. */
function workerMain(settings: WorkerSettings): void {
  const ctl = new Int32Array(settings.control);
  const port = settings.port;
  let posted = 0;
  const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []) => {
    port.postMessage(message, transfer);
    posted++;
    Atomics.store(ctl, PRODUCED, posted);
    Atomics.notify(ctl, PRODUCED);
  };
  let items: WireRequest[] = [];
  let transfer: ArrayBuffer[] = [];
  let latin1Texts: string[] = [];
  let chars = 0;
  const postBatch = () => {
    let latin1: ArrayBuffer | undefined;
    if (latin1Texts.length > 0) {
      const bytes = Buffer.allocUnsafeSlow(latin1Texts.reduce((sum, text) => sum + text.length, 0));
      let at = 0;
      for (const text of latin1Texts) at += bytes.write(text, at, 'latin1');
      latin1 = bytes.buffer;
      transfer.push(latin1);
    }
    post({ kind: 'batch', items, latin1 }, transfer);
    items = [];
    transfer = [];
    latin1Texts = [];
    chars = 0;
  };
  try {
    const prepare = requestPreparer(settings);
    for (const request of parseWorkloadSpec(settings.spec).requests()) {
      const prepared = prepare(request);
      const text = prepared.routing.routingText;
      transfer.push(prepared.hashes.buffer as ArrayBuffer);
      chars += text.length;
      if (!isLatin1(text)) items.push({ request: prepared });
      else {
        items.push({
          request: { ...prepared, routing: { ...prepared.routing, routingText: '' } },
          latin1Chars: text.length,
        });
        latin1Texts.push(text);
      }
      if (items.length < BATCH_REQUESTS && chars < BATCH_CHARS) continue;
      for (;;) {
        if (Atomics.load(ctl, STOP) !== 0) return;
        const consumed = Atomics.load(ctl, CONSUMED);
        if (posted - consumed < MAX_AHEAD) break;
        Atomics.wait(ctl, CONSUMED, consumed, WAIT_SLICE_MS);
      }
      postBatch();
    }
    if (items.length > 0) postBatch();
    post({ kind: 'end' });
  } catch (err) {
    post({ kind: 'failed', message: (err as Error).message });
  }
}

/** The routing text decoded last, and its bytes: the reads of one dispatch (policy, load estimate) share it. */
let lastDecodedBytes: Buffer | undefined;
let lastDecodedText = '';

/**
 * `base` with its routing text kept as Latin-1 bytes and decoded when read (≈ 2 µs for 32 KB). Only the text
 * decoded last is kept, so the several reads of one dispatch decode once and the string dies in the young
 * generation once the next request is read; the bytes are external memory. Policies see an ordinary
 * `routingText`.
 */
export function latin1RoutingRequest(base: RoutingRequest, bytes: Buffer): RoutingRequest {
  const read = (): string => {
    if (bytes !== lastDecodedBytes) {
      lastDecodedText = bytes.toString('latin1');
      lastDecodedBytes = bytes;
    }
    return lastDecodedText;
  };
  return Object.defineProperty({ ...base }, 'routingText', { get: read, enumerable: true });
}

if (!isMainThread && (workerData as { role?: string } | undefined)?.role === ROLE)
  workerMain(workerData as WorkerSettings);
