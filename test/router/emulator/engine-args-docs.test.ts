import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_ARGS, allowedText } from '../../../router/src/emulator/engine-args';

describe('docs/emulator.md engine arguments table', () => {
  test('GIVEN the table between the engine-args markers THEN it lists every argument the model follows, with its range and meaning', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/emulator.md'), 'utf8');
    const table = doc.slice(doc.indexOf('<!-- engine-args:begin -->'), doc.indexOf('<!-- engine-args:end -->'));
    const rows = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    expect(rows.map((r) => [r[1], r[2], r[4]])).toEqual(
      ENGINE_ARGS.map((s) => [`\`${s.flag}\``, allowedText(s), s.meaning]),
    );
  });
});
