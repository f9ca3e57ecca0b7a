import type { InstanceView } from '../routing-policy';
import { narrowed, type Filter } from './stage';

function isHealthy(instance: InstanceView): boolean {
  return instance.healthy;
}

/**
 * Passes the healthy instances: one health-checks have ejected is never a candidate. The one healthy filter every
 * policy runs (policies used to repeat the check each in its own loop).
 */
export const HEALTHY_FILTER: Filter<InstanceView, unknown> = {
  kind: 'filter',
  name: 'healthy',
  filter(instances, _facts, scratch) {
    let first = 0;
    while (first < instances.length && instances[first].healthy) first++;
    return narrowed(instances, first, isHealthy, undefined, scratch);
  },
};
