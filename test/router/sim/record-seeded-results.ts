/** Prints the digests seeded-results.test.ts pins (see there before re-recording). */
import { SEEDED_SCENARIOS, seededDigests } from './seeded-results';

const out: Record<string, unknown> = {};
for (const scenario of SEEDED_SCENARIOS) out[scenario.name] = seededDigests(scenario);
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
