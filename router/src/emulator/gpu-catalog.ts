/**
 * The GPUs of the construct's instance catalog (lib/instance-type.ts) and what a roofline needs of each: memory,
 * dense BF16 and FP8 tensor throughput, memory bandwidth and the link tensor-parallel ranks talk over, from the
 * vendor's datasheets (`source`). Dense figures are the datasheets' "with sparsity" figures halved where only those
 * are printed. Memory is counted in GiB as printed in GB, as the shipped profiles count it (router/profiles/*.json).
 *
 * `INSTANCE_GPUS` repeats the construct's catalog (GPU count and model per type): lib/ is a separate package the
 * router cannot import, so test/router/emulator/gpu-catalog.test.ts holds the two equal, as SAGEMAKER_NAME is held.
 */

export interface GpuSpec {
  /** The construct's name for it (`InstanceType.gpuModel`), e.g. `H100 80GB`. */
  readonly name: string;
  readonly memoryGiB: number;
  readonly bf16DenseTflops: number;
  /** Undefined where the GPU has no FP8 tensor cores (FP8 weights then compute in BF16). */
  readonly fp8DenseTflops?: number;
  /** Memory bandwidth, TB/s. */
  readonly memoryTBps: number;
  /** How tensor-parallel ranks exchange activations, and its bandwidth per direction per GPU (GB/s). */
  readonly link: { readonly kind: 'NVLink' | 'PCIe'; readonly gbpsPerDirection: number };
  readonly source: string;
}

const PCIE_GEN4_X16 = { kind: 'PCIe', gbpsPerDirection: 32 } as const;

export const GPU_SPECS: Readonly<Record<string, GpuSpec>> = {
  'H100 80GB': {
    name: 'H100 80GB',
    memoryGiB: 80,
    bf16DenseTflops: 989.4,
    fp8DenseTflops: 1978.9,
    memoryTBps: 3.35,
    link: { kind: 'NVLink', gbpsPerDirection: 450 },
    source:
      'https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM: BF16 1,979 / FP8 3,958 TFLOPS with sparsity, 3.35 TB/s, NVLink 900 GB/s)',
  },
  'H200 141GB': {
    name: 'H200 141GB',
    memoryGiB: 141,
    bf16DenseTflops: 989.4,
    fp8DenseTflops: 1978.9,
    memoryTBps: 4.8,
    link: { kind: 'NVLink', gbpsPerDirection: 450 },
    source:
      'https://www.nvidia.com/en-us/data-center/h200/ (H200 SXM: BF16 1,979 / FP8 3,958 TFLOPS with sparsity, 4.8 TB/s, NVLink 900 GB/s)',
  },
  'B200 179GB': {
    name: 'B200 179GB',
    memoryGiB: 179,
    bf16DenseTflops: 2250,
    fp8DenseTflops: 4500,
    memoryTBps: 8,
    link: { kind: 'NVLink', gbpsPerDirection: 900 },
    source:
      'https://www.nvidia.com/en-us/data-center/hgx/ (HGX B200 per GPU: FP16/BF16 4.5 / FP8 9 PFLOPS with sparsity, 8 TB/s, NVLink 1.8 TB/s); NOT re-verified here',
  },
  'A100 40GB': {
    name: 'A100 40GB',
    memoryGiB: 40,
    bf16DenseTflops: 312,
    memoryTBps: 1.555,
    link: { kind: 'NVLink', gbpsPerDirection: 300 },
    source:
      'https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (A100 SXM 40GB: BF16 312 TFLOPS, 1,555 GB/s, NVLink 600 GB/s)',
  },
  'A100 80GB': {
    name: 'A100 80GB',
    memoryGiB: 80,
    bf16DenseTflops: 312,
    memoryTBps: 2.039,
    link: { kind: 'NVLink', gbpsPerDirection: 300 },
    source:
      'https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (A100 SXM 80GB: BF16 312 TFLOPS, 2,039 GB/s, NVLink 600 GB/s)',
  },
  'A10G 24GB': {
    name: 'A10G 24GB',
    memoryGiB: 24,
    bf16DenseTflops: 125,
    memoryTBps: 0.6,
    link: PCIE_GEN4_X16,
    source:
      'https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/a10-datasheet.pdf (A10: BF16 125 TFLOPS dense, 600 GB/s, PCIe Gen4); the A10G is AWS\u2019s variant with no public datasheet: NOT verified for it',
  },
  'L4 24GB': {
    name: 'L4 24GB',
    memoryGiB: 24,
    bf16DenseTflops: 121,
    fp8DenseTflops: 242.5,
    memoryTBps: 0.3,
    link: PCIE_GEN4_X16,
    source:
      'https://www.nvidia.com/en-us/data-center/l4/ (L4: BF16 242 / FP8 485 TFLOPS with sparsity, 300 GB/s, PCIe Gen4 x16 64 GB/s)',
  },
  'L40S 48GB': {
    name: 'L40S 48GB',
    memoryGiB: 48,
    bf16DenseTflops: 362.05,
    fp8DenseTflops: 733,
    memoryTBps: 0.864,
    link: PCIE_GEN4_X16,
    source:
      'https://www.nvidia.com/en-us/data-center/l40s/ (L40S: BF16 362.05 / FP8 733 TFLOPS dense, 864 GB/s, PCIe Gen4 x16 64 GB/s)',
  },
};

/** GPUs per SageMaker instance type: the construct's catalog (lib/instance-type.ts), in its order. */
export const INSTANCE_GPUS: Readonly<Record<string, { readonly gpuCount: number; readonly gpu: string }>> = {
  'ml.p5.48xlarge': { gpuCount: 8, gpu: 'H100 80GB' },
  'ml.p5e.48xlarge': { gpuCount: 8, gpu: 'H200 141GB' },
  'ml.p5en.48xlarge': { gpuCount: 8, gpu: 'H200 141GB' },
  'ml.p6-b200.48xlarge': { gpuCount: 8, gpu: 'B200 179GB' },
  'ml.p4d.24xlarge': { gpuCount: 8, gpu: 'A100 40GB' },
  'ml.p4de.24xlarge': { gpuCount: 8, gpu: 'A100 80GB' },
  'ml.g5.xlarge': { gpuCount: 1, gpu: 'A10G 24GB' },
  'ml.g5.2xlarge': { gpuCount: 1, gpu: 'A10G 24GB' },
  'ml.g5.4xlarge': { gpuCount: 1, gpu: 'A10G 24GB' },
  'ml.g5.8xlarge': { gpuCount: 1, gpu: 'A10G 24GB' },
  'ml.g5.16xlarge': { gpuCount: 1, gpu: 'A10G 24GB' },
  'ml.g5.12xlarge': { gpuCount: 4, gpu: 'A10G 24GB' },
  'ml.g5.24xlarge': { gpuCount: 4, gpu: 'A10G 24GB' },
  'ml.g5.48xlarge': { gpuCount: 8, gpu: 'A10G 24GB' },
  'ml.g6.xlarge': { gpuCount: 1, gpu: 'L4 24GB' },
  'ml.g6.2xlarge': { gpuCount: 1, gpu: 'L4 24GB' },
  'ml.g6.4xlarge': { gpuCount: 1, gpu: 'L4 24GB' },
  'ml.g6.8xlarge': { gpuCount: 1, gpu: 'L4 24GB' },
  'ml.g6.16xlarge': { gpuCount: 1, gpu: 'L4 24GB' },
  'ml.g6.12xlarge': { gpuCount: 4, gpu: 'L4 24GB' },
  'ml.g6.24xlarge': { gpuCount: 4, gpu: 'L4 24GB' },
  'ml.g6.48xlarge': { gpuCount: 8, gpu: 'L4 24GB' },
  'ml.g6e.xlarge': { gpuCount: 1, gpu: 'L40S 48GB' },
  'ml.g6e.2xlarge': { gpuCount: 1, gpu: 'L40S 48GB' },
  'ml.g6e.4xlarge': { gpuCount: 1, gpu: 'L40S 48GB' },
  'ml.g6e.8xlarge': { gpuCount: 1, gpu: 'L40S 48GB' },
  'ml.g6e.16xlarge': { gpuCount: 1, gpu: 'L40S 48GB' },
  'ml.g6e.12xlarge': { gpuCount: 4, gpu: 'L40S 48GB' },
  'ml.g6e.24xlarge': { gpuCount: 4, gpu: 'L40S 48GB' },
  'ml.g6e.48xlarge': { gpuCount: 8, gpu: 'L40S 48GB' },
};

/** An instance type's GPUs and their spec, or undefined for a type outside the catalog. */
export function instanceGpus(instanceType: string): { readonly gpuCount: number; readonly gpu: GpuSpec } | undefined {
  const entry = INSTANCE_GPUS[instanceType];
  return entry === undefined ? undefined : { gpuCount: entry.gpuCount, gpu: GPU_SPECS[entry.gpu] };
}
