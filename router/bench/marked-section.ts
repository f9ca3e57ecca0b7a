/**
 * A generated block of a markdown file between a begin and an end marker (HTML comments): the command that writes
 * it replaces only its own block, so sections other commands write, or people wrote, stay as they are.
 */
export interface SectionMarkers {
  readonly begin: string;
  readonly end: string;
}

/**
 * `doc` with the block between `markers` (markers included) replaced by `body` wrapped in them; when `doc` has no
 * such block, the block is put at the start or the end of `doc`.
 */
export function withMarkedSection(
  doc: string,
  markers: SectionMarkers,
  body: string,
  whenMissing: 'prepend' | 'append',
): string {
  const block = `${markers.begin}\n${body.trim()}\n${markers.end}`;
  const i = doc.indexOf(markers.begin);
  const j = doc.indexOf(markers.end, i + markers.begin.length);
  if (i >= 0 && j > i) return `${doc.slice(0, i)}${block}${doc.slice(j + markers.end.length)}`;
  if (doc.trim() === '') return `${block}\n`;
  return whenMissing === 'prepend' ? `${block}\n\n${doc.replace(/^\n+/, '')}` : `${doc.trimEnd()}\n\n${block}\n`;
}
