/**
 * Whether an endpoint's inference components fit its fleet. SageMaker places each copy of a component on one instance,
 * with the accelerators and memory the copy reserves (`ComputeResourceRequirements`,
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentComputeResourceRequirements.html); a
 * copy that fits on no instance cannot be placed. So, for the endpoint's instance type:
 *   - one copy's accelerators and memory must fit on one instance;
 *   - the copies of all components together must fit on the instances: at the initial count (`copyCount` on
 *     `instanceCount`), the fewest copies autoscaling keeps on the fewest instances managed scaling keeps, and the most
 *     copies autoscaling may ask for on the most instances the fleet may have.
 * A total within the fleet's GPUs is not enough, since a copy never splits across instances: 3 copies of 3 GPUs ask
 * for 9 of the 10 GPUs of two 5-GPU instances, yet each instance holds one copy (2 GPUs stay free there). The check packs the copies into the instances first fit decreasing (largest first). With copies of different sizes that
 * heuristic can, rarely, refuse a placement that exists; every message names the numbers, so a user can check.
 */

/** One component as the fit check sees it. */
export interface ComponentDemand {
  /** For messages: the component's construct id. */
  readonly label: string;
  /** Copies at creation. */
  readonly copies: number;
  /** Fewest copies autoscaling keeps (copies without autoscaling). */
  readonly minCopies: number;
  /** Most copies autoscaling may ask for (copies without autoscaling). */
  readonly maxCopies: number;
  /** Accelerators each copy reserves. */
  readonly acceleratorsPerCopy: number;
  /** Memory each copy reserves, in MiB. */
  readonly memoryPerCopyMiB: number;
}

/** The fleet: one instance type, its initial count and its managed-scaling minimum. */
export interface FleetShape {
  readonly instanceTypeName: string;
  readonly gpusPerInstance?: number;
  readonly memoryPerInstanceMiB?: number;
  readonly instanceCount: number;
  /** `managedInstanceScaling.minInstanceCount`, when managed scaling is on. */
  readonly minInstanceCount?: number;
  /** The most instances: `managedInstanceScaling.maxInstanceCount`, else `instanceCount`. */
  readonly maxInstanceCount?: number;
}

/** Places `items` (one size per copy) into `bins` bins of `capacity`, first fit decreasing; true when all fit. */
export function packs(items: readonly number[], bins: number, capacity: number): boolean {
  const free = Array.from({ length: bins }, () => capacity);
  for (const item of [...items].sort((a, b) => b - a)) {
    const bin = free.findIndex((f) => f >= item);
    if (bin < 0) return false;
    free[bin] -= item;
  }
  return true;
}

function itemsOf(
  components: readonly ComponentDemand[],
  copiesOf: (c: ComponentDemand) => number,
  sizeOf: (c: ComponentDemand) => number,
): number[] {
  return components.flatMap((c) => Array.from({ length: Math.max(0, copiesOf(c)) }, () => sizeOf(c)));
}

function summary(
  components: readonly ComponentDemand[],
  copiesOf: (c: ComponentDemand) => number,
  sizeOf: (c: ComponentDemand) => number,
  unit: string,
): string {
  const parts = components.filter((c) => copiesOf(c) > 0).map((c) => `${c.label} ${copiesOf(c)} × ${sizeOf(c)}${unit}`);
  const total = components.reduce((sum, c) => sum + copiesOf(c) * sizeOf(c), 0);
  return `${total}${unit}: ${parts.join(', ') || 'no copies'}`;
}

/** Every way the components do not fit the fleet, each naming the props and the limit. */
export function componentFitProblems(fleet: FleetShape, components: readonly ComponentDemand[]): string[] {
  const problems: string[] = [];
  const { gpusPerInstance: gpus, memoryPerInstanceMiB: memory, instanceTypeName: type } = fleet;
  for (const c of components) {
    if (gpus !== undefined && c.acceleratorsPerCopy > gpus) {
      problems.push(
        `${c.label}: acceleratorsPerCopy must be at most the ${gpus} GPUs of one ${type}, since a copy runs on one instance (got ${c.acceleratorsPerCopy})`,
      );
    }
    if (memory !== undefined && c.memoryPerCopyMiB > memory) {
      problems.push(
        `${c.label}: minMemoryPerCopy must be at most the ${memory} MiB of one ${type}, since a copy runs on one instance (got ${c.memoryPerCopyMiB} MiB)`,
      );
    }
  }
  if (problems.length > 0) return problems;

  const check = (instances: number, copiesOf: (c: ComponentDemand) => number, what: string, where: string) => {
    if (
      gpus !== undefined &&
      !packs(
        itemsOf(components, copiesOf, (c) => c.acceleratorsPerCopy),
        instances,
        gpus,
      )
    ) {
      problems.push(
        `${what} × acceleratorsPerCopy of the endpoint's inference components must fit in the ${gpus} GPUs of each of the ${where} ` +
          `(${instances * gpus} GPUs, each copy on one instance) (got ${summary(components, copiesOf, (c) => c.acceleratorsPerCopy, ' GPUs')})`,
      );
    }
    if (
      memory !== undefined &&
      !packs(
        itemsOf(components, copiesOf, (c) => c.memoryPerCopyMiB),
        instances,
        memory,
      )
    ) {
      problems.push(
        `${what} × minMemoryPerCopy of the endpoint's inference components must fit in the ${memory} MiB of each of the ${where} ` +
          `(each copy on one instance) (got ${summary(components, copiesOf, (c) => c.memoryPerCopyMiB, ' MiB')})`,
      );
    }
  };
  check(fleet.instanceCount, (c) => c.copies, 'copyCount', `instanceCount ${fleet.instanceCount} × ${type}`);
  const min = fleet.minInstanceCount;
  if (min !== undefined && min > 0) {
    check(
      min,
      (c) => c.minCopies,
      'autoScaling.minCopies (copyCount without autoscaling)',
      `managedInstanceScaling.minInstanceCount ${min} × ${type}`,
    );
  }
  // Copies autoscaling asks for beyond what the largest fleet holds are never placed.
  const max = fleet.maxInstanceCount ?? fleet.instanceCount;
  if (components.some((c) => c.maxCopies !== c.copies)) {
    check(
      max,
      (c) => c.maxCopies,
      'autoScaling.maxCopies (copyCount without autoscaling)',
      fleet.maxInstanceCount !== undefined
        ? `managedInstanceScaling.maxInstanceCount ${max} × ${type}`
        : `instanceCount ${max} × ${type} (no managedInstanceScaling)`,
    );
  }
  return problems;
}
