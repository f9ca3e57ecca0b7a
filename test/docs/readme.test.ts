/**
 * The README's first screen (everything above its first `---`) answers a newcomer's four questions — what it is, how
 * to try it free, how to evaluate their own traffic, what it costs — and gives exactly the project's two set-up
 * commands, `npm ci && npm run demo` and `npm test`. Below it, commands are the installed packages' unless they sit
 * under "Development".
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIST_PRICE_USD_PER_HOUR } from '../../router/src/aws/ab-plan';
import { BUILT_IN_PRICE_SOURCE } from '../../router/src/cli/plan-command';
import { ROUTER_PACKAGE, shellBlocks } from './documented-commands';

const README = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
const lines = README.split('\n');
const firstScreen = lines.slice(0, lines.indexOf('---')).join('\n');
const commands = (text: string) =>
  shellBlocks(text, 'README.md')
    .flatMap((b) => b.text.split('\n'))
    .map((l) => l.replace(/(^|\s)#.*$/, '').trim())
    .filter((l) => l !== '');

describe('when a newcomer reads the README', () => {
  test('GIVEN the first screen THEN it ends within 40 lines, at the first ---', () => {
    expect(lines.indexOf('---')).toBeGreaterThan(0);
    expect(lines.indexOf('---')).toBeLessThanOrEqual(40);
  });

  test('GIVEN the first screen THEN its only commands are the two set-up commands', () => {
    expect(commands(firstScreen)).toEqual(['npm ci && npm run demo', 'npm test']);
  });

  test('GIVEN the first screen THEN it explains the cache before it names the routing, and says what trying it costs', () => {
    expect(firstScreen.indexOf('KV cache')).toBeGreaterThan(0);
    expect(firstScreen.indexOf('KV cache')).toBeLessThan(firstScreen.indexOf('Prefix-aware routing'));
    expect(firstScreen).toMatch(/\*\*Try it, free\*\*[^\n]*no AWS account/);
    expect(firstScreen).toMatch(/\*\*Evaluate your own traffic, free\*\*[\s\S]*\(docs\/own-traffic\.md\)/);
  });

  test("GIVEN the first screen's hourly costs THEN each is its fleet at the project's recorded price, with the price's date and page", () => {
    const price = (type: string) => LIST_PRICE_USD_PER_HOUR[type];
    const stated = [...firstScreen.matchAll(/≈ \$([\d.]+)\/h \((\d+) × (ml\.[\w.]+)\)/g)].map((m) => ({
      usd: Number(m[1]),
      fleet: `${m[2]} × ${m[3]}`,
      expected: Number(m[2]) * price(m[3]),
    }));
    expect(stated.map((s) => s.fleet)).toEqual(['2 × ml.g6e.2xlarge', '2 × ml.p5.48xlarge', '7 × ml.p5.48xlarge']);
    for (const s of stated)
      expect({ fleet: s.fleet, usd: s.usd }).toEqual({ fleet: s.fleet, usd: Number(s.expected.toFixed(2)) });
    expect(firstScreen).toContain(/recorded (\d{4}-\d{2}-\d{2})/.exec(BUILT_IN_PRICE_SOURCE)![1]);
    expect(firstScreen).toContain(/https:\/\/\S+\//.exec(BUILT_IN_PRICE_SOURCE)![0]);
  });

  test('GIVEN the rest THEN it installs the packages, and checkout commands appear only under Development', () => {
    const development = README.indexOf('\n## Development\n');
    expect(development).toBeGreaterThan(0);
    const user = README.slice(README.indexOf('\n---\n'), development);
    expect(commands(user)).toEqual(expect.arrayContaining(['npm install cdk-prefix-aware-llm']));
    expect(user).toContain(`npx -p ${ROUTER_PACKAGE} prefix-router`);
    expect(commands(user).filter((c) => /\bnpm (?:ci|run|test)\b|node dist\//.test(c))).toEqual([]);
    expect(user).not.toMatch(/`(?:npm run [\w:]+|node dist\/[^`]*)`/);
  });
});
