/**
 * A double-ended queue on a growable ring buffer: O(1) push/pop at both ends. The engine's waiting queue
 * takes new requests at the back and preempted ones at the front, and can hold thousands under overload.
 */
export class RequestQueue<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(16);
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  peekFront(): T | undefined {
    return this.count === 0 ? undefined : this.items[this.head];
  }

  pushBack(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) % this.items.length] = item;
    this.count++;
  }

  pushFront(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.head = (this.head - 1 + this.items.length) % this.items.length;
    this.items[this.head] = item;
    this.count++;
  }

  popFront(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.items.length;
    this.count--;
    return item;
  }

  /** Removes one occurrence of `item` (O(n): only for aborts). Returns whether it was present. */
  remove(item: T): boolean {
    const size = this.items.length;
    for (let i = 0; i < this.count; i++) {
      if (this.items[(this.head + i) % size] !== item) continue;
      for (let j = i; j < this.count - 1; j++)
        this.items[(this.head + j) % size] = this.items[(this.head + j + 1) % size];
      this.items[(this.head + this.count - 1) % size] = undefined;
      this.count--;
      return true;
    }
    return false;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.count; i++) yield this.items[(this.head + i) % this.items.length] as T;
  }

  private grow(): void {
    const bigger = new Array<T | undefined>(this.items.length * 2);
    for (let i = 0; i < this.count; i++) bigger[i] = this.items[(this.head + i) % this.items.length];
    this.items = bigger;
    this.head = 0;
  }
}
