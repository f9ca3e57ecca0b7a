import { servesModel } from '../served-models';
import type { InstanceView } from '../routing-policy';
import { narrowed, type DecisionFacts, type Filter } from './stage';

/**
 * Passes the instances that serve the request's model or LoRA adapter (policy/served-models.ts). An instance it
 * drops is healthy and keeps its cache: a policy's memory of it stays (only a health change forgets an instance).
 */
export const SERVES_MODEL_FILTER: Filter<InstanceView, DecisionFacts> = {
  kind: 'filter',
  name: 'serves-model',
  filter(instances, { request }, scratch) {
    const model = request.model;
    if (model === '') return instances;
    let first = 0;
    while (first < instances.length && servesModel(instances[first], model)) first++;
    return narrowed(instances, first, servesModel, model, scratch);
  },
};
