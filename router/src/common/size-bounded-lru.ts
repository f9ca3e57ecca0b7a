/**
 * A map that keeps the most recently used entries within a budget of total size (characters, bytes, blocks:
 * whatever `sizeOf` measures), forgetting the least recently used first. For caches of values that can be
 * rebuilt, so forgetting changes cost, never results.
 */
export class SizeBoundedLru<K, V> {
  // Map iteration order is insertion order: least recently used first.
  private readonly entries = new Map<K, V>();
  private total = 0;

  constructor(
    private readonly maxSize: number,
    private readonly sizeOf: (value: V) => number,
  ) {
    if (!(maxSize >= 0)) throw new RangeError(`maxSize must be >= 0 (got ${maxSize})`);
  }

  /** The value for `key`, now the most recently used; undefined when not kept. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /**
   * Keeps `value` as the most recently used, forgetting least recently used entries until the total fits.
   * A value larger than the whole budget is not kept (returns false).
   */
  set(key: K, value: V): boolean {
    this.delete(key);
    const size = this.sizeOf(value);
    if (size > this.maxSize) return false;
    this.entries.set(key, value);
    this.total += size;
    while (this.total > this.maxSize) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [K, V];
      this.entries.delete(oldestKey);
      this.total -= this.sizeOf(oldest);
    }
    return true;
  }

  delete(key: K): boolean {
    const value = this.entries.get(key);
    if (value === undefined) return false;
    this.entries.delete(key);
    this.total -= this.sizeOf(value);
    return true;
  }

  /** Entries kept. */
  get count(): number {
    return this.entries.size;
  }

  /** Their total size. */
  get size(): number {
    return this.total;
  }
}
