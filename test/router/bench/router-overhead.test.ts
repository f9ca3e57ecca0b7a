import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  benchBodies,
  renderMarkdown,
  runRouterOverheadBench,
  writeIntoDocs,
} from '../../../router/bench/router-overhead';

describe('when the router overhead benchmark runs (smoke size, in-process)', () => {
  it('GIVEN a tiny run THEN every phase produces figures without errors and renders a table', async () => {
    const result = await runRouterOverheadBench({
      isolation: 'in-process',
      rate: 100,
      requests: 20,
      throughputPhaseMs: 40,
      concurrency: 4,
      decisionIterations: 100,
      maxRunMs: 20_000,
    });
    for (const row of result.latency) {
      expect(row.direct).toMatchObject({ n: 20, errors: 0 });
      expect(row.routed).toMatchObject({ n: 20, errors: 0 });
      expect(row.routed.p50).toBeGreaterThan(0);
      expect(row.routed.p99).toBeGreaterThanOrEqual(row.routed.p50);
    }
    for (const row of result.throughput) {
      expect(row.errors).toBe(0);
      expect(row.directRps).toBeGreaterThan(0);
      expect(row.routedRps).toBeGreaterThan(0);
    }
    expect(result.decisions).toHaveLength(6);
    for (const d of result.decisions) for (const n of [2, 8, 32]) expect(d.byInstances[n].p99).toBeGreaterThan(0);
    const markdown = renderMarkdown(result, 'npm run bench:router', '2030-01-01');
    expect(markdown).toContain('| non-streamed, full response |');
    expect(markdown).toContain('| sagemaker-prefix-aware, 8,192 characters of message text (default) |');
  });

  it('GIVEN the body generator THEN bodies are exactly 32 KiB of valid chat JSON', () => {
    for (const stream of [false, true]) {
      const bodies = benchBodies(stream);
      expect(bodies).toHaveLength(64);
      for (const b of bodies) {
        expect(b.length).toBe(32 * 1024);
        expect(JSON.parse(b.toString()).stream).toBe(stream);
      }
    }
  });

  it('GIVEN a docs file with markers THEN only the marked block is replaced', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'bench-docs-')), 'router.md');
    writeFileSync(path, 'before\n<!-- bench:router:begin -->\nold\n<!-- bench:router:end -->\nafter\n');
    writeIntoDocs(path, 'new table');
    expect(readFileSync(path, 'utf8')).toBe(
      'before\n<!-- bench:router:begin -->\nnew table\n<!-- bench:router:end -->\nafter\n',
    );
  });
});
