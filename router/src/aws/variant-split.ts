import type { LiveBenchmarkResult, LiveRequestRecord } from '../benchmark/live-benchmark';
import type { WorkloadRequest } from '../workload/workload-request';

/**
 * Splitting one workload between production variants (`--variants`): every request of a conversation, and
 * every request of a prefix group, goes to the same variant, so each variant sees whole conversations in
 * order and whole prefix groups (the unit a prefix cache works on), and the two halves are statistically
 * alike: groups are assigned by a hash of their id, independent of their size or arrival time.
 */
export function splitKey(request: WorkloadRequest): string {
  if (request.conversationId !== undefined) return `conversation:${request.conversationId}`;
  if (request.group !== undefined) return `group:${request.group}`;
  if (request.tenantKey !== undefined) return `tenant:${request.tenantKey}`;
  return `request:${request.id}`;
}

/** FNV-1a 32-bit: stable across machines and runs, good enough spread for a two- or three-way split. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function variantFor(request: WorkloadRequest, variants: readonly string[]): string {
  return variants[fnv1a(splitKey(request)) % variants.length];
}

/** Records of one run, split into one result per variant by the assignment made at send time. */
export function partitionByVariant(
  result: LiveBenchmarkResult,
  assigned: ReadonlyMap<string, string>,
  variants: readonly string[],
): Map<string, LiveBenchmarkResult> {
  const out = new Map<string, LiveBenchmarkResult>();
  for (const variant of variants) {
    const records: LiveRequestRecord[] = result.records.filter((r) => assigned.get(r.id) === variant);
    let endMs = result.window.startMs;
    for (const r of records) endMs = Math.max(endMs, r.sentAtMs + r.e2eMs);
    const instances = new Set<string>();
    for (const r of records) if (r.instance !== null) instances.add(r.instance);
    out.set(variant, {
      ...result,
      records,
      window: { startMs: result.window.startMs, endMs },
      prometheus: undefined,
      ceilings: undefined,
      backendMetrics: [],
      instancesSeen: [...instances].sort(),
      sent: records.length,
      failed: records.filter((r) => r.error !== undefined).length,
      notes: [
        ...result.notes.filter((n) => !n.startsWith('Live run against')),
        `Variant ${variant}: ${records.length} of the ${result.records.length} requests of one run, split between ${variants.join(' and ')} by conversation / prefix group (TargetVariant); peak in-flight and send lag are the whole run's.`,
      ],
    });
  }
  return out;
}
