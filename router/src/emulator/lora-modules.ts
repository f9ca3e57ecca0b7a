/**
 * LoRA adapters an engine serves, as vLLM's `--lora-modules` takes them (https://docs.vllm.ai/en/latest/features/lora/):
 * each is `name=path`, or a JSON object `{"name": …, "path": …, "base_model_name": …}`. A request runs with an
 * adapter by naming it in `model`; GET /v1/models lists the base model and then each adapter, with the adapter's
 * path as `root` and the base model as `parent`.
 */
export interface LoraModule {
  /** The name requests put in `model`. */
  readonly name: string;
  /** Where the adapter's weights are (the emulator loads nothing: it is only reported as `root`). */
  readonly path: string;
  /** The base model it adapts; default the engine's served model. */
  readonly baseModelName?: string;
}

/** vLLM's default `--max-loras`: adapters that can run in one batch. */
export const DEFAULT_MAX_LORAS = 1;

/** One `--lora-modules` value; throws RangeError naming what is wrong. */
export function parseLoraModule(text: string): LoraModule {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      throw new RangeError(`--lora-modules: ${JSON.stringify(text)} is not valid JSON`);
    }
    const o = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
    if (typeof o.name !== 'string' || typeof o.path !== 'string')
      throw new RangeError(`--lora-modules: a JSON module needs string "name" and "path", got ${JSON.stringify(text)}`);
    if (o.base_model_name !== undefined && typeof o.base_model_name !== 'string')
      throw new RangeError('--lora-modules: "base_model_name" must be a string');
    return checked({
      name: o.name,
      path: o.path,
      ...(typeof o.base_model_name === 'string' ? { baseModelName: o.base_model_name } : {}),
    });
  }
  const eq = trimmed.indexOf('=');
  if (eq <= 0) throw new RangeError(`--lora-modules takes name=path (or a JSON object), got ${JSON.stringify(text)}`);
  return checked({ name: trimmed.slice(0, eq), path: trimmed.slice(eq + 1) });
}

function checked(module: LoraModule): LoraModule {
  if (module.name.trim() === '' || module.name !== module.name.trim())
    throw new RangeError(
      `--lora-modules: adapter name ${JSON.stringify(module.name)} must be non-empty, without surrounding spaces`,
    );
  if (module.path.trim() === '') throw new RangeError(`--lora-modules: adapter ${module.name} has an empty path`);
  return module;
}

/** Validates a set of adapters against the served model: names unique and none equal to the base model's. */
export function checkLoraModules(modules: readonly LoraModule[], modelName: string): void {
  const seen = new Set<string>();
  for (const m of modules) {
    checked(m);
    if (m.name === modelName) throw new RangeError(`--lora-modules: adapter ${m.name} has the served model's name`);
    if (seen.has(m.name)) throw new RangeError(`--lora-modules: adapter ${m.name} is given twice`);
    seen.add(m.name);
  }
}
