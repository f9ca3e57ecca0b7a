import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { POLICY_NAMES } from '../../../router/src/policy';
import { MIXED_FLEET } from '../../../router/bench/mixed-fleet';
import {
  FULL_SIZES,
  PEERS_END,
  PEERS_START,
  peersWorkloads,
  QUICK_SIZES,
  registeredPeers,
  runPeersBench,
  selectWorkloads,
} from '../../../router/bench/peers';

const P5 = builtinProfile('p5-llama-3.1-70b');

describe('when the bench:peers benchmark runs (smoke size)', () => {
  it('GIVEN a tiny shared-system workload on 3 × p5 and on the mixed fleet THEN each workload has one table with a row per strategy and a verdict, and the page one chart each', async () => {
    const spec = 'shared-system?groups=2&promptsPerGroup=3&systemTokens=256&outputTokens=16';
    const { section, html } = await runPeersBench({
      workloads: [
        { key: 'trace', title: 'shared-system, 3 × p5', spec, fleet: [P5, P5, P5], windowRequests: 2 },
        { key: 'mixed', title: 'shared-system, 5 × p5 + 2 × p4d', spec, fleet: MIXED_FLEET },
      ],
      sweep: 'sagemaker-prefix-aware?prefixLength=1024&concurrencyThreshold=8',
      jobs: 1,
      label: 'smoke',
    });
    expect(section.startsWith(PEERS_START)).toBe(true);
    expect(section.endsWith(PEERS_END)).toBe(true);
    const peers = registeredPeers().map((p) => p.name);
    // Every peer the registry holds, and only registered names.
    expect(peers.length).toBeGreaterThanOrEqual(5);
    for (const name of peers) expect(POLICY_NAMES).toContain(name);
    const tables = section.split('\n### ').slice(1);
    expect(tables).toHaveLength(2);
    for (const table of tables) {
      const rows = table
        .split('\n')
        .filter((l) => l.startsWith('| ') && !l.startsWith('| strategy') && !l.startsWith('| ---'));
      // cache-aware, every peer, the best sweep setting, random.
      expect(rows).toHaveLength(peers.length + 3);
      for (const row of rows) expect(row.split(' | ')).toHaveLength(7);
      expect(rows[0]).toMatch(
        /^\| cache-aware \| \d+ ms \| \d+ ms \| \d+ ms \| [\d.]+ % \| [\d.]+ req\/s \| [\d.]+ \|$/,
      );
      for (const [i, name] of peers.entries()) expect(rows[i + 1].startsWith(`| ${name}`)).toBe(true);
      expect(rows[peers.length + 1]).toMatch(/^\| best of the sweep: sagemaker-prefix-aware\?/);
      expect(rows[peers.length + 2].startsWith('| random |')).toBe(true);
      expect(table).toMatch(
        /cache-aware against the best peer on each: P50 [\d.]+× `[a-z-]+`'s, P90 [\d.]+× `[a-z-]+`'s \(target ≤ 1.02× on both: \*\*(met|not met)\*\*\)/,
      );
    }
    // The windowed workload (6 requests, windows of 2) has the sampling-noise line; the other has none.
    expect(tables[0]).toMatch(
      /\n- Sampling noise: this run cut into 3 windows of 2 requests .*: P50 [\d.]+–[\d.]+× \(geometric mean [\d.]+×, ≤ 1.02× in \d of 3\); P90 /,
    );
    expect(tables[1]).not.toContain('Sampling noise');
    expect(html.match(/<svg/g)).toHaveLength(2);
  });
});

describe('when bench:peers sizes the trace workloads', () => {
  it('GIVEN the full sizes THEN both trace workloads replay the whole trace with 200-request windows; GIVEN --quick THEN its first 40', () => {
    const full = peersWorkloads('TRACE.jsonl', FULL_SIZES).filter((w) => w.spec.startsWith('trace:'));
    expect(full.map((w) => [w.key, w.spec, w.windowRequests])).toEqual([
      ['trace', 'trace:TRACE.jsonl?speedup=1', 200],
      ['mixed-trace', 'trace:TRACE.jsonl?speedup=1', 200],
    ]);
    const quick = peersWorkloads('TRACE.jsonl', QUICK_SIZES).find((w) => w.key === 'trace');
    expect(quick?.spec).toBe('trace:TRACE.jsonl?speedup=1&count=40');
  });
});

describe('when bench:peers is given --workloads', () => {
  const all = peersWorkloads('TRACE.jsonl', FULL_SIZES);

  it('GIVEN no flag THEN every workload runs; GIVEN keys THEN only those, in the bench order', () => {
    expect(selectWorkloads(all, undefined).map((w) => w.key)).toEqual(all.map((w) => w.key));
    expect(selectWorkloads(all, 'short-chat,trace').map((w) => w.key)).toEqual(['trace', 'short-chat']);
  });

  it.each(['', 'trace,chat', ','])('GIVEN %p THEN it is refused, naming the flag and the keys it takes', (keys) => {
    expect(() => selectWorkloads(all, keys)).toThrow(
      '--workloads must be a comma-separated list of trace, long-context, shared-system, short-chat, mixed-trace',
    );
  });
});
