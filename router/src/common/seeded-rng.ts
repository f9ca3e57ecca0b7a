/**
 * A small seeded pseudo-random generator (mulberry32). Policies, workloads and the simulator take one of
 * these instead of calling Math.random, so a run with the same seed makes the same choices everywhere.
 */
// Read once: Jest runs tests in a vm context where a global lookup inside a hot loop is many times slower.
const imul = Math.imul;

export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
}

export class SeededRng implements Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, n). */
  nextInt(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Exponentially distributed value with the given mean (Poisson inter-arrival times). */
  nextExponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** An independent generator derived from this one's seed and a label, so sub-streams do not interfere. */
  fork(label: string): SeededRng {
    let h = this.state ^ 0x9e3779b9;
    for (let i = 0; i < label.length; i++) h = imul(h ^ label.charCodeAt(i), 0x01000193);
    return new SeededRng(h >>> 0);
  }
}
