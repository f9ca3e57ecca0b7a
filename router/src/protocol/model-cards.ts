/** One entry of an OpenAI `GET /v1/models` list (vLLM adds `root`, `parent`, `max_model_len`). */
export interface ModelCard {
  readonly id: string;
  readonly [field: string]: unknown;
}

/** The cards of a /v1/models answer (`{"object":"list","data":[{"id":…},…]}`), or undefined when it is not one. */
export function modelCardsOf(body: unknown): ModelCard[] | undefined {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { data?: unknown }).data)) return undefined;
  const cards: ModelCard[] = [];
  for (const card of (body as { data: unknown[] }).data) {
    if (typeof card === 'object' && card !== null && typeof (card as { id?: unknown }).id === 'string')
      cards.push(card as ModelCard);
  }
  return cards;
}
