import type { RoutingBlockKey } from '../../state/state-hash-key';

interface TreeNode {
  /** Blocks from the root to this node (1 for a prompt's first block). */
  readonly depth: number;
  /** Each tenant (instance id) whose sent prompts pass through this node, and the tick it last did. */
  readonly tenants: Map<string, number>;
}

interface ModelTree {
  readonly nodes: Map<RoutingBlockKey, TreeNode>;
  /** Characters held, summed over tenants (a node two tenants hold counts twice, as each would evict it). */
  size: number;
}

/**
 * SGLang Model Gateway's approximate radix tree (`cache_aware`): per model, which workers were sent which prompt
 * prefixes, bounded by periodic LRU eviction to a total size. Its nodes here are chained routing-block hashes
 * (policy/routing-blocks.ts: a block's key covers every character before it, so one key is one tree path) rather
 * than the gateway's characters: a match is exact to within one block. Written only at commit.
 */
export class SmgPrefixTree {
  private readonly models = new Map<string, ModelTree>();
  private tick = 0;

  constructor(private readonly blockChars: number) {}

  /**
   * Leading blocks of `hashes` each of `tenants` was sent (0 for one never sent any), in the order of `tenants`.
   */
  matchedBlocks(model: string, hashes: readonly RoutingBlockKey[], tenants: readonly string[]): number[] {
    const matched = tenants.map(() => 0);
    const tree = this.models.get(model);
    if (tree === undefined) return matched;
    for (let i = 0; i < hashes.length; i++) {
      const node = tree.nodes.get(hashes[i]);
      if (node === undefined) break;
      let advanced = false;
      for (let t = 0; t < tenants.length; t++) {
        if (matched[t] === i && node.tenants.has(tenants[t])) {
          matched[t] = i + 1;
          advanced = true;
        }
      }
      if (!advanced) break;
    }
    return matched;
  }

  /** Records that `tenant` was sent the prompt of `hashes` (every block on its path, touched now). */
  insert(model: string, hashes: readonly RoutingBlockKey[], tenant: string): void {
    let tree = this.models.get(model);
    if (tree === undefined) {
      tree = { nodes: new Map(), size: 0 };
      this.models.set(model, tree);
    }
    const tick = ++this.tick;
    for (let i = 0; i < hashes.length; i++) {
      let node = tree.nodes.get(hashes[i]);
      if (node === undefined) {
        node = { depth: i + 1, tenants: new Map() };
        tree.nodes.set(hashes[i], node);
      }
      if (!node.tenants.has(tenant)) tree.size += this.blockChars;
      node.tenants.set(tenant, tick);
    }
  }

  /** Characters the model's tree holds, summed over tenants. */
  sizeOf(model: string): number {
    return this.models.get(model)?.size ?? 0;
  }

  /**
   * Evicts, per model, the least recently sent (tenant, block) entries until the tree holds at most `maxChars`;
   * among equally recent ones the deepest first, so a tenant's path stays a prefix (a leaf goes before its parent).
   */
  evict(maxChars: number): void {
    for (const tree of this.models.values()) {
      if (tree.size <= maxChars) continue;
      const entries: Array<{ key: RoutingBlockKey; node: TreeNode; tenant: string; tick: number }> = [];
      for (const [key, node] of tree.nodes)
        for (const [tenant, tick] of node.tenants) entries.push({ key, node, tenant, tick });
      entries.sort((a, b) => a.tick - b.tick || b.node.depth - a.node.depth);
      for (const e of entries) {
        if (tree.size <= maxChars) break;
        e.node.tenants.delete(e.tenant);
        tree.size -= this.blockChars;
        if (e.node.tenants.size === 0) tree.nodes.delete(e.key);
      }
    }
  }
}
