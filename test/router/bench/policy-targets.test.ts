import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPolicyTargets, writeSection } from '../../../router/bench/policy-targets';

describe('when the bench:policies benchmark runs (smoke size)', () => {
  it('GIVEN a few trace requests and small workloads THEN it reports every target with a figure and met / not met', async () => {
    const section = await runPolicyTargets({
      trace: join(__dirname, '..', '..', '..', 'router', 'traces', 'mooncake-synthetic.jsonl'),
      traceCount: 24,
      sweep: 'sagemaker-prefix-aware?prefixLength=1024&concurrencyThreshold=8,32',
      longContext: 'long-context?count=24',
      sharedSystem: 'shared-system?groups=4&promptsPerGroup=6',
      shortChat: 'short-chat?count=24',
      decisionTime: false,
      label: 'smoke',
    });
    expect(section.startsWith('<!-- bench:policies -->')).toBe(true);
    expect(section.endsWith('<!-- /bench:policies -->')).toBe(true);
    for (const target of [
      'P90 TTFT:',
      'P50 TTFT:',
      'of the fleet ceiling',
      'At 2× compression',
      'At 4× compression',
      'Four router replicas, round-robin, each observing',
      'The same replicas without observing',
      'by observation interval',
      'Diagnostics (four replicas',
      'sharing the true load view only',
      'sharing one index and its counts only',
      '### long-context',
      '### shared-system',
      '### short-chat',
    ]) {
      expect(section).toContain(target);
    }
    expect((section.match(/\*\*(met|not met)\*\*/g) ?? []).length).toBeGreaterThanOrEqual(17);
    expect(section).toContain('| cache-aware |');
  });

  it('GIVEN a docs file with the section THEN only the section is replaced; without one it is appended', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'bench-policies-')), 'benchmarks.md');
    writeFileSync(path, 'before\n<!-- bench:policies -->\nold\n<!-- /bench:policies -->\nafter\n');
    writeSection(path, '<!-- bench:policies -->\nnew\n<!-- /bench:policies -->');
    expect(readFileSync(path, 'utf8')).toBe('before\n<!-- bench:policies -->\nnew\n<!-- /bench:policies -->\nafter\n');
    writeFileSync(path, '# Benchmarks\n');
    writeSection(path, '<!-- bench:policies -->\nx\n<!-- /bench:policies -->');
    expect(readFileSync(path, 'utf8')).toBe('# Benchmarks\n\n<!-- bench:policies -->\nx\n<!-- /bench:policies -->\n');
  });
});
