/**
 * Which SageMaker host AMI (`ProductionVariant.InferenceAmiVersion`) an image needs, from the CUDA major version
 * the image was built with. The AMI's NVIDIA driver must be at least as new as the image's CUDA toolkit; a newer
 * driver runs older CUDA images, an older one cannot start newer ones (the container fails with
 * "CUDA driver version is insufficient" long after the deployment started).
 */

/** Amazon Linux 2023, NVIDIA driver 580, CUDA 13.0. */
export const AMI_AL2023_GPU_4_1 = 'al2023-ami-sagemaker-inference-gpu-4-1';
/** Amazon Linux 2, NVIDIA driver 550, CUDA 12.4. */
export const AMI_AL2_GPU_3_1 = 'al2-ami-sagemaker-inference-gpu-3-1';
/** Amazon Linux 2, NVIDIA driver 535, CUDA 12.2. */
export const AMI_AL2_GPU_2_1 = 'al2-ami-sagemaker-inference-gpu-2-1';
/** Amazon Linux 2, NVIDIA driver 535, CUDA 12.2. */
export const AMI_AL2_GPU_2 = 'al2-ami-sagemaker-inference-gpu-2';

/** Highest CUDA major version each known AMI's driver supports. */
const CUDA_MAJOR_OF_AMI: Readonly<Record<string, number>> = {
  [AMI_AL2023_GPU_4_1]: 13,
  [AMI_AL2_GPU_3_1]: 12,
  [AMI_AL2_GPU_2_1]: 12,
  [AMI_AL2_GPU_2]: 12,
};

/** The CUDA major version an AMI's driver supports, or undefined for an AMI this library does not know. */
export function cudaMajorOfAmi(ami: string): number | undefined {
  return Object.prototype.hasOwnProperty.call(CUDA_MAJOR_OF_AMI, ami) ? CUDA_MAJOR_OF_AMI[ami] : undefined;
}

/**
 * The AMI for a CUDA major version: 13 → AL2023 GPU 4.1; 12 → AL2 GPU 3.1 (the newest CUDA 12 AMI); anything else
 * (unknown, or a CUDA this library has no AMI for) → undefined, meaning SageMaker's default.
 */
export function amiForCudaMajor(cudaMajor: number | undefined): string | undefined {
  if (cudaMajor === 13) return AMI_AL2023_GPU_4_1;
  if (cudaMajor === 12) return AMI_AL2_GPU_3_1;
  return undefined;
}

/** vLLM DLC tags: `server-sagemaker-cuda-v2.3` → 13 (v2.x is CUDA 13), `-v1.x` → 12. */
export function cudaMajorOfDlcTag(tag: string): number | undefined {
  const match = /^server-sagemaker-cuda-v(\d+)(\.|$)/.exec(tag);
  if (!match) return undefined;
  return Number(match[1]) >= 2 ? 13 : 12;
}

/**
 * Tags that name the CUDA toolkit as `cuMMm`: LMI `0.36.0-lmi28.0.0-cu130`, `0.36.0-lmi28.0.0-cu130-v1.1`,
 * `0.36.0-lmi20.0.0-cu128-v1.0` → 13, 13, 12. The token must stand between dashes or at the end.
 */
export function cudaMajorOfCuTag(tag: string): number | undefined {
  const match = /(?:^|-)cu(\d{2})\d(?=-|$)/.exec(tag);
  return match ? Number(match[1]) : undefined;
}
