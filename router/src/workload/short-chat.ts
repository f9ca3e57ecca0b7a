import { SeededRng } from '../common/seeded-rng';
import { CHARS_PER_TOKEN } from '../state/block-hash';
import { poissonArrivalsMs } from './load-shape';
import { labelledText, seedFromLabel, TextCache } from './synthetic-text';
import {
  canonicalSpec,
  COMMON_OPTIONS,
  drawInRange,
  loadFromOptions,
  parametersOf,
  requestId,
  type Workload,
} from './workload';
import { resolveOptions, WorkloadSpecError, type IntRange, type OptionSchema } from './workload-options';
import type { ChatMessage, WorkloadRequest } from './workload-request';

/**
 * Multi-turn chat: conversations start as a Poisson process; each picks one of a few system prompts and runs a
 * variable number of turns. Turn k's prompt is the system prompt plus every earlier user message and assistant
 * reply plus the new user message, so each turn's prompt extends the previous turn's prompt and reply (the
 * reply is synthetic text of the previous turn's max_tokens). Turn k+1 depends on turn k (`dependsOnId`) and
 * is planned an exponential think time after turn k's planned arrival.
 */
export const SHORT_CHAT_OPTIONS = {
  systemPrompts: {
    type: 'int',
    min: 1,
    max: 100000,
    default: 8,
    description: 'distinct system prompts conversations draw from',
  },
  systemTokens: {
    type: 'range',
    min: 1,
    max: 1000000,
    default: { min: 200, max: 600 },
    description: 'tokens of each system prompt (drawn once per prompt)',
  },
  turns: {
    type: 'range',
    min: 1,
    max: 1000,
    default: { min: 2, max: 6 },
    description: 'turns per conversation, drawn uniformly',
  },
  userTokens: {
    type: 'range',
    min: 1,
    max: 1000000,
    default: { min: 20, max: 200 },
    description: 'tokens of each user message',
  },
  outputTokens: {
    type: 'range',
    min: 1,
    max: 100000,
    default: { min: 50, max: 300 },
    description: 'tokens of each reply (max_tokens)',
  },
  thinkSeconds: {
    type: 'number',
    min: 0,
    max: 86400,
    default: 10,
    description: 'mean (exponential) gap between planned arrivals of consecutive turns',
  },
  maxContextTokens: {
    type: 'int',
    min: 2,
    max: 10000000,
    default: 8192,
    description: 'a conversation ends before a turn whose prompt + reply would exceed this',
  },
  seed: COMMON_OPTIONS.seed,
  rate: {
    ...COMMON_OPTIONS.rate,
    default: 4,
    description: 'mean request rate (conversations start at rate ÷ mean turns)',
  },
  duration: {
    ...COMMON_OPTIONS.duration,
    default: 600,
    description: 'conversations start within this many seconds; started conversations run all their turns',
  },
  count: COMMON_OPTIONS.count,
  concurrency: COMMON_OPTIONS.concurrency,
} as const satisfies OptionSchema;

export interface ShortChatOptions {
  readonly systemPrompts: number;
  readonly systemTokens: IntRange;
  readonly turns: IntRange;
  readonly userTokens: IntRange;
  readonly outputTokens: IntRange;
  readonly thinkSeconds: number;
  readonly maxContextTokens: number;
  readonly seed: number;
  readonly rate: number;
  readonly duration: number;
  readonly count?: number;
  readonly concurrency?: number;
}

interface Conversation {
  readonly number: number;
  readonly rng: SeededRng;
  readonly turns: number;
  turn: number;
  nextArrivalMs: number;
  history: readonly ChatMessage[];
  historyTokens: number;
  previousId: string | undefined;
}

/** Min-heap of conversations by next planned arrival (ties: lower conversation number first). */
class ConversationQueue {
  private readonly heap: Conversation[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): Conversation | undefined {
    return this.heap[0];
  }

  push(c: Conversation): void {
    const heap = this.heap;
    heap.push(c);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  pop(): Conversation | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l], heap[m])) m = l;
        if (r < heap.length && before(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Conversation, b: Conversation): boolean {
  return a.nextArrivalMs < b.nextArrivalMs || (a.nextArrivalMs === b.nextArrivalMs && a.number < b.number);
}

/** System prompt i's text, drawn from the seed alone and cached (conversations share a few system prompts). */
function systemPromptTexts(options: ShortChatOptions): (index: number) => string {
  const systems = new TextCache(16_000_000);
  return (i: number): string =>
    systems.get(i, () => {
      const tokens = drawInRange(
        () => new SeededRng(seedFromLabel(options.seed, `short-chat/system-length/${i}`)).next(),
        options.systemTokens,
      );
      return labelledText(options.seed, `short-chat/system/${i}`, tokens * CHARS_PER_TOKEN);
    });
}

/** A conversation's start: its content depends only on (seed, conversation number), not on timing. */
function newConversation(
  options: ShortChatOptions,
  number: number,
  startMs: number,
  systemText: (index: number) => string,
): Conversation {
  const rng = new SeededRng(seedFromLabel(options.seed, `short-chat/conversation/${number}`));
  const turns = drawInRange(() => rng.next(), options.turns);
  const systemIndex = rng.nextInt(options.systemPrompts);
  const system = systemText(systemIndex);
  return {
    number,
    rng,
    turns,
    turn: 0,
    nextArrivalMs: startMs,
    history: [{ role: 'system', content: system }],
    historyTokens: system.length / CHARS_PER_TOKEN,
    previousId: undefined,
  };
}

/** After a turn was sent: the assistant's reply joins the history, and the user thinks before the next turn. */
function nextTurn(
  options: ShortChatOptions,
  conversation: Conversation,
  sent: { messages: readonly ChatMessage[]; userTokens: number; maxTokens: number; id: string },
): void {
  const { number, turn, rng } = conversation;
  const reply: ChatMessage = {
    role: 'assistant',
    content: labelledText(options.seed, `short-chat/${number}/assistant/${turn}`, sent.maxTokens * CHARS_PER_TOKEN),
  };
  conversation.history = [...sent.messages, reply];
  conversation.historyTokens += sent.userTokens + sent.maxTokens;
  conversation.turn = turn + 1;
  conversation.previousId = sent.id;
  conversation.nextArrivalMs += -Math.log(1 - rng.next()) * options.thinkSeconds * 1000;
}

export function shortChatWorkload(
  given: Partial<ShortChatOptions> | Record<string, string> = {},
  fromText = false,
): Workload {
  const resolved = resolveOptions('short-chat', SHORT_CHAT_OPTIONS, given, fromText);
  const options = resolved as unknown as ShortChatOptions;
  const firstTurnMax = options.systemTokens.max + options.userTokens.max + options.outputTokens.max;
  if (firstTurnMax > options.maxContextTokens) {
    throw new WorkloadSpecError('short-chat', [
      `maxContextTokens must be at least systemTokens.max + userTokens.max + outputTokens.max = ${firstTurnMax} so every first turn fits (got ${options.maxContextTokens})`,
    ]);
  }
  const meanTurns = (options.turns.min + options.turns.max) / 2;
  const durationMs = options.duration * 1000;

  function* requests(): Generator<WorkloadRequest, void, undefined> {
    const root = new SeededRng(options.seed);
    const starts = poissonArrivalsMs(root.fork('conversation-starts'), options.rate / meanTurns);
    const systemText = systemPromptTexts(options);
    const queue = new ConversationQueue();
    const firstStart: number = starts.next().value;
    let nextStartMs: number | undefined = firstStart < durationMs ? firstStart : undefined;
    let conversations = 0;
    let index = 0;
    while (options.count === undefined || index < options.count) {
      const head = queue.peek();
      if (nextStartMs !== undefined && (head === undefined || nextStartMs <= head.nextArrivalMs)) {
        queue.push(newConversation(options, conversations++, nextStartMs, systemText));
        const after: number = starts.next().value;
        nextStartMs = after < durationMs ? after : undefined;
        continue;
      }
      const conversation = queue.pop();
      if (conversation === undefined) return;
      const { rng, number, turn } = conversation;
      const userTokens = drawInRange(() => rng.next(), options.userTokens);
      const maxTokens = drawInRange(() => rng.next(), options.outputTokens);
      if (conversation.historyTokens + userTokens + maxTokens > options.maxContextTokens) continue; // ends here
      const user: ChatMessage = {
        role: 'user',
        content: labelledText(options.seed, `short-chat/${number}/user/${turn}`, userTokens * CHARS_PER_TOKEN),
      };
      const messages = [...conversation.history, user];
      const id = requestId('sc', index);
      const conversationId = `conv-${String(number).padStart(6, '0')}`;
      yield {
        index,
        id,
        arrivalMs: conversation.nextArrivalMs,
        kind: 'chat',
        messages,
        maxTokens,
        conversationId,
        turn,
        ...(conversation.previousId !== undefined ? { dependsOnId: conversation.previousId } : {}),
      };
      index++;
      if (turn + 1 >= conversation.turns) continue;
      nextTurn(options, conversation, { messages, userTokens, maxTokens, id });
      queue.push(conversation);
    }
  }

  const expected = Math.round(options.rate * options.duration);
  return {
    kind: 'short-chat',
    spec: canonicalSpec('short-chat', SHORT_CHAT_OPTIONS, resolved),
    parameters: parametersOf(resolved),
    load: loadFromOptions(resolved),
    expectedRequests: options.count === undefined ? expected : Math.min(options.count, expected),
    expectedRequestsExact: false,
    description: `multi-turn chat, ${options.turns.min}–${options.turns.max} turns, ${options.systemPrompts} system prompts, history grows each turn`,
    notes: [],
    requests,
  };
}
