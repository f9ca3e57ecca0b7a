import type { BlockHash } from '../../state/block-hash';

// Globals are looked up once: in vm contexts (Jest runs tests in one) each global access in a hot loop is slow.
const imul = Math.imul;

const EMPTY = -1;

/**
 * A hash map from block hash (a non-negative 53-bit integer) to a non-negative int32, with open addressing
 * (linear probing, backward-shift deletion) over typed arrays. A JS Map or Set keyed by 53-bit numbers boxes
 * every key and costs close to a microsecond per operation; this table is several times faster and uses 12
 * bytes per slot, which is what lets the ceilings replay an hour of 8k-token prompts in seconds.
 */
export class BlockHashTable {
  private keys: Float64Array;
  private values: Int32Array;
  private mask: number;
  private count = 0;

  constructor(expectedEntries = 1024) {
    let slots = 16;
    while (slots < expectedEntries * 2) slots *= 2;
    this.keys = new Float64Array(slots).fill(EMPTY);
    this.values = new Int32Array(slots);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count;
  }

  private slotOf(key: BlockHash): number {
    const low = key >>> 0;
    const high = (key / 4294967296) >>> 0;
    return (imul(low ^ imul(high, 0x85ebca6b), 0x9e3779b1) >>> 0) & this.mask;
  }

  /** The value stored for `key`, or -1. */
  get(key: BlockHash): number {
    const keys = this.keys;
    for (let i = this.slotOf(key); ; i = (i + 1) & this.mask) {
      const k = keys[i]!;
      if (k === key) return this.values[i]!;
      if (k === EMPTY) return EMPTY;
    }
  }

  has(key: BlockHash): boolean {
    return this.get(key) !== EMPTY;
  }

  /** Insert or overwrite. `value` must be a non-negative int32. */
  set(key: BlockHash, value: number): void {
    if (!(key >= 0)) throw new RangeError(`block hash must be non-negative (got ${key})`);
    if ((this.count + 1) * 2 > this.keys.length) this.grow();
    const keys = this.keys;
    for (let i = this.slotOf(key); ; i = (i + 1) & this.mask) {
      const k = keys[i]!;
      if (k === key) {
        this.values[i] = value;
        return;
      }
      if (k === EMPTY) {
        keys[i] = key;
        this.values[i] = value;
        this.count++;
        return;
      }
    }
  }

  /** Remove `key`; returns whether it was present. Later entries of the probe run shift back (no tombstones). */
  delete(key: BlockHash): boolean {
    const keys = this.keys;
    const values = this.values;
    const mask = this.mask;
    let i = this.slotOf(key);
    for (; ; i = (i + 1) & mask) {
      const k = keys[i]!;
      if (k === EMPTY) return false;
      if (k === key) break;
    }
    // Backward shift: move later entries of the run into the hole when their home slot allows it.
    let hole = i;
    for (let j = (hole + 1) & mask; keys[j]! !== EMPTY; j = (j + 1) & mask) {
      const home = this.slotOf(keys[j]!);
      const distanceToJ = (j - home) & mask;
      const distanceToHole = (hole - home) & mask;
      if (distanceToHole < distanceToJ) {
        keys[hole] = keys[j]!;
        values[hole] = values[j]!;
        hole = j;
      }
    }
    keys[hole] = EMPTY;
    this.count--;
    return true;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    this.keys = new Float64Array(oldKeys.length * 2).fill(EMPTY);
    this.values = new Int32Array(oldKeys.length * 2);
    this.mask = this.keys.length - 1;
    this.count = 0;
    for (let i = 0; i < oldKeys.length; i++) {
      const k = oldKeys[i]!;
      if (k !== EMPTY) this.set(k, oldValues[i]!);
    }
  }
}
