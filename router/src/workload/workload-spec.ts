import { LONG_CONTEXT_OPTIONS, longContextWorkload } from './long-context';
import { TRACE_OPTIONS, traceWorkload } from './mooncake-trace';
import { SHARED_SYSTEM_OPTIONS, sharedSystemWorkload } from './shared-system';
import { SHORT_CHAT_OPTIONS, shortChatWorkload } from './short-chat';
import type { Workload, WorkloadKind } from './workload';
import {
  describeAllowed,
  formatOptionValue,
  parseQuery,
  WorkloadSpecError,
  type OptionSchema,
} from './workload-options';

/** Every workload's options, for CLI help and docs. */
export const WORKLOAD_OPTION_SCHEMAS: Readonly<Record<WorkloadKind, OptionSchema>> = {
  'long-context': LONG_CONTEXT_OPTIONS,
  'short-chat': SHORT_CHAT_OPTIONS,
  'shared-system': SHARED_SYSTEM_OPTIONS,
  trace: TRACE_OPTIONS,
};

const SPEC_HELP =
  "expected 'long-context', 'short-chat', 'shared-system' or 'trace:PATH' (or trace:NAME of a shipped trace, e.g. trace:mooncake-synthetic), optionally followed by ?name=value&name=value";

/**
 * Build a workload from a spec string:
 *
 *   long-context                       defaults
 *   long-context?groups=600&rate=6     options after '?', joined by '&' (values may be %-escaped)
 *   short-chat?turns=2..8&concurrency=32
 *   shared-system?groups=128
 *   trace:router/traces/mooncake-synthetic.jsonl?speedup=2&count=500
 *   trace:mooncake-synthetic?count=500   a trace shipped with the package, by name, from any directory
 *
 * For a trace, everything between 'trace:' and the first '?' is the file path. Every invalid option is
 * reported at once (WorkloadSpecError), naming the option, its allowed range and the value received; a bad
 * trace file throws TraceFormatError listing its bad lines.
 */
export function parseWorkloadSpec(spec: string): Workload {
  const trimmed = spec.trim();
  const q = trimmed.indexOf('?');
  const head = q === -1 ? trimmed : trimmed.slice(0, q);
  const query = q === -1 ? '' : trimmed.slice(q + 1);
  if (head.startsWith('trace:')) {
    const path = head.slice('trace:'.length);
    if (path === '') throw new WorkloadSpecError(`spec '${spec}'`, ['trace needs a file path: trace:PATH']);
    return traceWorkload(path, parseQuery(`trace:${path}`, query), true);
  }
  switch (head) {
    case 'long-context':
      return longContextWorkload(parseQuery(head, query), true);
    case 'short-chat':
      return shortChatWorkload(parseQuery(head, query), true);
    case 'shared-system':
      return sharedSystemWorkload(parseQuery(head, query), true);
    default:
      throw new WorkloadSpecError(`spec '${spec}'`, [`unknown workload '${head}': ${SPEC_HELP}`]);
  }
}

/** A plain-text table of a workload's options (name, allowed values, default, meaning) for `--help`. */
export function describeWorkloadOptions(kind: WorkloadKind): string {
  const schema = WORKLOAD_OPTION_SCHEMAS[kind];
  return Object.entries(schema)
    .map(([name, option]) => {
      const fallback = option.default === undefined ? 'unset' : formatOptionValue(option.default);
      return `  ${name} — ${option.description}; ${describeAllowed(option)}; default ${fallback}`;
    })
    .join('\n');
}
