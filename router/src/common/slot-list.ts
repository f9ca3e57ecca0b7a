/**
 * No slot, inside this module. Its methods compare against this local constant, not the export: TypeScript's
 * CommonJS output reads an exported const as `exports.NO_SLOT`, a property load on every use that V8 did not fold
 * (the AIBrix block store ran about 10 % slower with it; docs/changelog.md, sixth round).
 */
const NONE = -1;

/** The end of a SlotList: what `head`, `tail`, `next`, `previous` and `popHead` return where there is no slot. */
export const NO_SLOT = NONE;

/**
 * An intrusive doubly linked list over slots 0…capacity−1 (the indexes of a caller's typed arrays), in two
 * Int32Arrays it owns: O(1) push at either end, unlink from anywhere, pop from the head, no allocation per
 * operation. The caller owns the slots' data and knows which slots are in the list (a slot is in it at most once;
 * pushing a slot already in it, or unlinking one that is not, breaks the list, as `checkLinks` reports). One class
 * for every user, so V8 sees one shape at every call site (KV block pools' free queues, the AIBrix table's
 * recency order).
 */
export class SlotList {
  /** previousOf[s] / nextOf[s]: the slot before / after slot s (NO_SLOT at the ends); stale while s is out. */
  private previousOf: Int32Array;
  private nextOf: Int32Array;
  private first = NONE;
  private last = NONE;
  private length = 0;

  constructor(capacity: number) {
    checkCapacity(capacity);
    this.previousOf = new Int32Array(capacity);
    this.nextOf = new Int32Array(capacity);
  }

  /** Slots the list can hold: valid slots are 0…capacity−1. */
  get capacity(): number {
    return this.nextOf.length;
  }

  /** Slots in the list. */
  get size(): number {
    return this.length;
  }

  /** The first slot (the next `popHead`), or NO_SLOT when empty. */
  get head(): number {
    return this.first;
  }

  /** The last slot, or NO_SLOT when empty. */
  get tail(): number {
    return this.last;
  }

  /** The slot after `slot` (in the list), or NO_SLOT at the tail. */
  next(slot: number): number {
    return this.nextOf[slot];
  }

  /** The slot before `slot` (in the list), or NO_SLOT at the head. */
  previous(slot: number): number {
    return this.previousOf[slot];
  }

  /** Appends `slot` (not in the list) after the tail. */
  pushTail(slot: number): void {
    const last = this.last;
    this.previousOf[slot] = last;
    this.nextOf[slot] = NONE;
    if (last === NONE) this.first = slot;
    else this.nextOf[last] = slot;
    this.last = slot;
    this.length++;
  }

  /** Puts `slot` (not in the list) before the head. */
  pushHead(slot: number): void {
    const first = this.first;
    this.nextOf[slot] = first;
    this.previousOf[slot] = NONE;
    if (first === NONE) this.last = slot;
    else this.previousOf[first] = slot;
    this.first = slot;
    this.length++;
  }

  /** Takes `slot` (in the list) out of it, wherever it sits. */
  unlink(slot: number): void {
    const before = this.previousOf[slot];
    const after = this.nextOf[slot];
    if (before === NONE) this.first = after;
    else this.nextOf[before] = after;
    if (after === NONE) this.last = before;
    else this.previousOf[after] = before;
    this.length--;
  }

  /** Takes the head out and returns it, or NO_SLOT when the list is empty. */
  popHead(): number {
    const slot = this.first;
    if (slot !== NONE) this.unlink(slot);
    return slot;
  }

  /** Room for slots up to `capacity`−1 (not less than now), keeping the list as it is. */
  grow(capacity: number): void {
    checkCapacity(capacity);
    if (capacity < this.capacity)
      throw new RangeError(`a SlotList cannot shrink (from ${this.capacity} to ${capacity})`);
    const previousOf = new Int32Array(capacity);
    const nextOf = new Int32Array(capacity);
    previousOf.set(this.previousOf);
    nextOf.set(this.nextOf);
    this.previousOf = previousOf;
    this.nextOf = nextOf;
  }

  /** Throws unless the links agree both ways, end to end, without a cycle, over `size` slots within capacity. */
  checkLinks(): void {
    let count = 0;
    let before = NONE;
    for (let slot = this.first; slot !== NONE; slot = this.nextOf[slot]) {
      if (!(slot >= 0 && slot < this.capacity)) throw new Error(`slot list reaches slot ${slot}, outside its capacity`);
      if (this.previousOf[slot] !== before) throw new Error(`slot list link broken at slot ${slot}`);
      if (++count > this.capacity) throw new Error('slot list has a cycle');
      before = slot;
    }
    if (before !== this.last) throw new Error(`slot list tail is ${this.last}, but the links end at ${before}`);
    if (count !== this.length) throw new Error(`slot list size is ${this.length}, but ${count} slots are linked`);
  }
}

function checkCapacity(capacity: number): void {
  if (!Number.isInteger(capacity) || capacity < 0)
    throw new RangeError(`SlotList capacity must be an integer >= 0, got ${capacity}`);
}
