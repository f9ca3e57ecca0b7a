import { InstanceType } from '../instance-type';

/** Edits (insert, delete, substitute) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length];
}

/** Most edits a name may be from a catalog type to count as a typo of it (`ml.g6e.2xlarg`, `ml.p5.48xlage`). */
const TYPO_EDITS = 3;
/** SageMaker's shape of a type name: family, then a size SageMaker sells. */
const WELL_FORMED = /^ml\.[a-z0-9-]+\.(?:\d*xlarge|large|medium|small|metal)$/;

/**
 * The catalog type a name not in the catalog most likely meant (a misspelt size, upper case), as a sentence naming
 * its constant; undefined for a well-formed name (maybe a type the catalog lacks) or one no catalog name is near.
 */
export function closestCatalogType(name: string): string | undefined {
  const lower = name.toLowerCase();
  // A well-formed name may be a real type the catalog lacks (ml.g7e.12xlarge is one edit from ml.g6e.12xlarge).
  if (lower === name && WELL_FORMED.test(name)) return undefined;
  let best: { type: InstanceType; edits: number } | undefined;
  for (const type of InstanceType.catalogEntries()) {
    const edits = editDistance(lower, type.name);
    if (edits <= TYPO_EDITS && (best === undefined || edits < best.edits)) best = { type, edits };
  }
  if (best === undefined) return undefined;
  const constant = best.type.name.toUpperCase().replace(/[.-]/g, '_');
  return `${name} is not in the catalog: did you mean ${best.type.name} (InstanceType.${constant}, ${best.type.gpuCount} × ${best.type.gpuModel})?`;
}
