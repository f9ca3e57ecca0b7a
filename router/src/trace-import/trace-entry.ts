import { estimatedPromptTokens } from '../policy/prompt-tokens';
import { CHARS_PER_TOKEN } from '../state/block-hash';
import { parseCapturedLine, type CaptureFormat } from './capture-formats';
import {
  requestShape,
  responseOutput,
  UnusableRequest,
  type CapturedResponse,
  type OutputSource,
  type RequestShape,
} from './captured-request';
import type { KeyedBlockIds } from './keyed-block-ids';
import type { PromptTokenizer } from '../state/tokenizer-file';

/** Told of every block of every usable prompt: its id, its parent's id (−1 for a first block), whether it is new. */
export type BlockListener = (id: number, parent: number, isNew: boolean) => void;

/** What one captured line becomes: a trace entry's lengths and keyed block ids, and what the summary counts of it. */
export interface TraceEntry {
  readonly timestampMs: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly outputSource: OutputSource;
  readonly ids: readonly number[];
  readonly format: CaptureFormat;
  readonly kind: RequestShape['kind'];
  readonly tenantKey?: string;
}

/** How lines become entries, the same for every line of an import. */
export interface EntrySettings {
  /** Tokens per hash id. */
  readonly blockTokens: number;
  /** Output length when neither the response nor the request gives one. */
  readonly defaultOutputTokens: number;
  /** The model's tokenizer; without it, the router's estimate (CHARS_PER_TOKEN characters per token). */
  readonly tokenizer?: PromptTokenizer;
  /** The import's id table: the same prompt prefix gets the same ids across lines. */
  readonly ids: KeyedBlockIds;
  readonly onBlock?: BlockListener;
}

/**
 * One captured line → one trace entry. Throws UnusableRequest (with its problem kind) for a line that holds no
 * usable generation request; keeps no state of its own (the id table is the caller's).
 */
export function traceEntryOf(format: CaptureFormat, text: string, settings: EntrySettings): TraceEntry {
  const captured = parseCapturedLine(format, text);
  const shape = requestShape(captured);
  const { inputTokens, ids } = promptBlocks(shape, settings);
  if (inputTokens < 1) throw new UnusableRequest('the prompt is empty', 'not-a-generation-body');
  const output = outputLength(captured.response, shape, settings);
  return {
    timestampMs: captured.timestampMs,
    inputTokens,
    outputTokens: output.tokens,
    outputSource: output.source,
    ids,
    format,
    kind: shape.kind,
    tenantKey: shape.routing.tenantKey,
  };
}

/** The prompt's length and block ids, chained from its model and tenant key (they never share a block). */
function promptBlocks(shape: RequestShape, settings: EntrySettings): { inputTokens: number; ids: number[] } {
  const namespace = `${shape.routing.model}\u0000${shape.routing.tenantKey ?? ''}`;
  const { tokenizer, blockTokens, ids, onBlock } = settings;
  if (tokenizer) {
    const tokens = tokenizer.encode(shape.text);
    return { inputTokens: tokens.length, ids: ids.idsOfTokens(tokens, blockTokens, namespace, onBlock) };
  }
  return {
    inputTokens: estimatedPromptTokens(shape.routing),
    ids: ids.idsOfText(shape.text, blockTokens * CHARS_PER_TOKEN, namespace, onBlock),
  };
}

/** The output length, from the best source there is: usage, the generated text, max_tokens, then the default. */
function outputLength(
  response: CapturedResponse | undefined,
  shape: RequestShape,
  settings: EntrySettings,
): { tokens: number; source: OutputSource } {
  const output = responseOutput(response);
  if (output !== undefined && 'tokens' in output) return { tokens: output.tokens, source: 'usage' };
  if (output !== undefined) {
    const counted = settings.tokenizer
      ? settings.tokenizer.encode(output.text).length
      : Math.ceil(output.text.length / CHARS_PER_TOKEN);
    return { tokens: Math.max(1, counted), source: 'generated-text' };
  }
  if (shape.maxTokens !== undefined) return { tokens: shape.maxTokens, source: 'max-tokens' };
  return { tokens: settings.defaultOutputTokens, source: 'default' };
}
