import { join } from 'node:path';
import { MIXED_END, MIXED_START, runMixedFleet } from '../../../router/bench/mixed-fleet';

const TRACE = join(__dirname, '..', '..', '..', 'router', 'traces', 'mooncake-synthetic.jsonl');

describe('when the mixed-fleet part of bench:policies runs (smoke size)', () => {
  it('GIVEN a few trace requests THEN it reports both targets per scenario with a figure, met or not, and what PREFIX_AWARE does', async () => {
    const section = await runMixedFleet({
      traceSpec: `trace:${TRACE}?count=24`,
      compressedTrace: (speedup) => `trace:${TRACE}?speedup=${speedup}&count=24`,
      longContext: 'long-context?count=24',
      sweep: 'sagemaker-prefix-aware?prefixLength=1024&concurrencyThreshold=8,32',
      label: 'smoke',
    });
    expect(section.startsWith(MIXED_START)).toBe(true);
    expect(section.endsWith(MIXED_END)).toBe(true);
    for (const text of [
      '### Mooncake trace at its own timestamps',
      '### long-context',
      '5 × p5-llama-3.1-70b + 2 × p4d-llama-3.1-70b',
      'cache-aware, profile speeds',
      'cache-aware, speeds learned from TTFTs',
      'cache-aware, blind to speed',
      'best sagemaker-prefix-aware',
      'PREFIX_AWARE (the sweep',
      'on 7 × p5',
      'on the 5 × p5 alone',
      '2× compression',
      '4× compression',
    ]) {
      expect(section).toContain(text);
    }
    // Two targets × two cache-aware variants × two scenarios, plus the four load-sweep lines.
    expect((section.match(/\*\*(met|not met)\*\*/g) ?? []).length).toBe(12);
  }, 300_000);
});
