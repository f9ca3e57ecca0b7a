import { execFile } from 'node:child_process';

/**
 * The GPUs the container may use, as the device ids engines receive in CUDA_VISIBLE_DEVICES. Sources, first
 * that answers: PREFIX_ROUTER_GPUS (a count), CUDA_VISIBLE_DEVICES set by the host runtime (its ids are kept, so
 * a container given GPUs 4-7 hands out 4-7), `nvidia-smi -L`. No source: zero GPUs, which only a custom
 * PREFIX_ROUTER_ENGINE_COMMAND can run with (the emulator, a CPU engine).
 */
export interface GpuInventory {
  readonly ids: readonly string[];
  /** Where the ids came from, for the start-up log. */
  readonly source: 'PREFIX_ROUTER_GPUS' | 'CUDA_VISIBLE_DEVICES' | 'nvidia-smi' | 'none';
  /** Why nvidia-smi gave nothing, when it was asked. */
  readonly note?: string;
}

/** Counts `GPU 0: NVIDIA H100 80GB HBM3 (UUID: ...)` lines of `nvidia-smi -L`. */
export function countNvidiaSmiGpus(output: string): number {
  return output.split('\n').filter((line) => /^GPU \d+:/.test(line.trim())).length;
}

/** Ids from CUDA_VISIBLE_DEVICES ('0,1', 'GPU-uuid,...'); undefined when unset or empty. */
export function parseCudaVisibleDevices(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const ids = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return ids.length === 0 ? undefined : ids;
}

export function sequentialIds(count: number): string[] {
  return Array.from({ length: count }, (_, i) => String(i));
}

export async function detectGpus(
  configured: number | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<GpuInventory> {
  const visible = parseCudaVisibleDevices(env.CUDA_VISIBLE_DEVICES);
  if (configured !== undefined) {
    // A count with visible ids: the first `configured` of them; else 0..count-1.
    const ids =
      visible !== undefined && visible.length >= configured ? visible.slice(0, configured) : sequentialIds(configured);
    return { ids, source: 'PREFIX_ROUTER_GPUS' };
  }
  if (visible !== undefined) return { ids: visible, source: 'CUDA_VISIBLE_DEVICES' };
  const result = await runNvidiaSmi();
  if (result.ok) return { ids: sequentialIds(countNvidiaSmiGpus(result.output)), source: 'nvidia-smi' };
  return { ids: [], source: 'none', note: result.problem };
}

function runNvidiaSmi(): Promise<{ ok: true; output: string } | { ok: false; problem: string }> {
  return new Promise((resolve) => {
    execFile('nvidia-smi', ['-L'], { timeout: 10_000 }, (err, stdout) => {
      if (err)
        resolve({ ok: false, problem: `nvidia-smi -L failed: ${(err as NodeJS.ErrnoException).code ?? err.message}` });
      else resolve({ ok: true, output: stdout });
    });
  });
}
