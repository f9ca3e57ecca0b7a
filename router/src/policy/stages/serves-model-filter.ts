import { servesModel } from '../served-models';
import type { InstanceView } from '../routing-policy';
import type { DecisionFacts, Filter } from './stage';

/**
 * Passes the instances that serve the request's model or LoRA adapter (policy/served-models.ts). An instance it
 * drops is healthy and keeps its cache: a policy's memory of it stays (only a health change forgets an instance).
 */
export const SERVES_MODEL_FILTER: Filter<InstanceView, DecisionFacts> = {
  kind: 'filter',
  name: 'serves-model',
  filter(instances, { request }) {
    const model = request.model;
    if (model === '') return instances;
    let serving = 0;
    for (let i = 0; i < instances.length; i++) if (servesModel(instances[i], model)) serving++;
    if (serving === instances.length) return instances;
    const passed: InstanceView[] = [];
    for (let i = 0; i < instances.length; i++) if (servesModel(instances[i], model)) passed.push(instances[i]);
    return passed;
  },
};
