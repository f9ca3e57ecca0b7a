/** Test helpers: prompt texts of an exact token length, with content unique to a label. */
import type { EngineEvent, FinishedEvent } from '../../../router/src/emulator/engine-model';

/** Exactly `tokens` tokens (4 characters each) of text that no other label produces. */
export function textOf(label: string, tokens: number): string {
  let text = '';
  for (let i = 0; text.length < tokens * 4; i++) text += `${label}:${i};`;
  return text.slice(0, tokens * 4);
}

export function finished(events: readonly EngineEvent[], id: string): FinishedEvent {
  const event = events.find((e): e is FinishedEvent => e.type === 'finished' && e.id === id);
  if (!event) throw new Error(`request ${id} did not finish`);
  return event;
}

export function ofType<T extends EngineEvent['type']>(
  events: readonly EngineEvent[],
  type: T,
): Extract<EngineEvent, { type: T }>[] {
  return events.filter((e) => e.type === type) as Extract<EngineEvent, { type: T }>[];
}
