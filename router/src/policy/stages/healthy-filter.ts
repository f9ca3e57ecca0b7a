import type { InstanceView } from '../routing-policy';
import type { Filter } from './stage';

/**
 * Passes the healthy instances: one health-checks have ejected is never a candidate. The one healthy filter every
 * policy runs (policies used to repeat the check each in its own loop).
 */
export const HEALTHY_FILTER: Filter<InstanceView, unknown> = {
  kind: 'filter',
  name: 'healthy',
  filter(instances) {
    let healthy = 0;
    for (let i = 0; i < instances.length; i++) if (instances[i].healthy) healthy++;
    if (healthy === instances.length) return instances;
    const passed: InstanceView[] = [];
    for (let i = 0; i < instances.length; i++) if (instances[i].healthy) passed.push(instances[i]);
    return passed;
  },
};
