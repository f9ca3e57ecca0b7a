import { withMarkedSection } from '../../../router/bench/marked-section';

const markers = { begin: '<!-- bench:x -->', end: '<!-- /bench:x -->' };

describe('when a command rewrites its generated block of a markdown file', () => {
  test('GIVEN a file with the block between other sections THEN only the block changes', () => {
    const doc = '# Title\n\n<!-- bench:x -->\nold\n<!-- /bench:x -->\n\n## Written by hand\nkept\n';
    expect(withMarkedSection(doc, markers, 'new', 'prepend')).toBe(
      '# Title\n\n<!-- bench:x -->\nnew\n<!-- /bench:x -->\n\n## Written by hand\nkept\n',
    );
  });

  test('GIVEN a file without the block and prepend THEN the block goes first and the rest is kept', () => {
    expect(withMarkedSection('## Other\ntext\n', markers, 'new', 'prepend')).toBe(
      '<!-- bench:x -->\nnew\n<!-- /bench:x -->\n\n## Other\ntext\n',
    );
  });

  test('GIVEN a file without the block and append THEN the block goes last', () => {
    expect(withMarkedSection('# Benchmarks\n', markers, 'new', 'append')).toBe(
      '# Benchmarks\n\n<!-- bench:x -->\nnew\n<!-- /bench:x -->\n',
    );
  });

  test('GIVEN an empty file THEN it holds the block alone', () => {
    expect(withMarkedSection('', markers, '\nnew\n\n', 'append')).toBe('<!-- bench:x -->\nnew\n<!-- /bench:x -->\n');
  });

  test('GIVEN an end marker before the begin marker (a damaged file) THEN the block is added, nothing is cut', () => {
    const doc = '<!-- /bench:x -->\nkeep\n';
    expect(withMarkedSection(doc, markers, 'new', 'append')).toBe(
      '<!-- /bench:x -->\nkeep\n\n<!-- bench:x -->\nnew\n<!-- /bench:x -->\n',
    );
  });

  test("GIVEN another command's block THEN it is left alone", () => {
    const doc = '<!-- bench:x -->\nold\n<!-- /bench:x -->\n<!-- bench:policies -->\np\n<!-- /bench:policies -->\n';
    expect(withMarkedSection(doc, markers, 'new', 'append')).toBe(
      '<!-- bench:x -->\nnew\n<!-- /bench:x -->\n<!-- bench:policies -->\np\n<!-- /bench:policies -->\n',
    );
  });
});
