// prefix_cache.py's JavaScript twin, for the lesson's components: the same names, the same
// rules in the same order, null where the Python returns None. One difference: a block's hash
// is the whole prefix it closes (the salt and every token id up to its end), which two blocks
// share exactly when their SHA-256 chains agree; the twin does not compute SHA-256.
// tests/test_js_mirrors.py runs both in Node on the same workloads and compares them.
(globalThis.courseModules ??= {}).prefix_cache ??= (() => {
  const { BLOCK_SIZE, ValueError, BlockPool, blocks_for } = courseModules.block_pool;

  // One hash per full block of tokens; a partly filled last block gets none. cache_salt
  // enters the first block, and the chain carries it (prefix_cache.py: block_hashes).
  function block_hashes(tokens, block_size = BLOCK_SIZE, cache_salt = null) {
    const hashes = [];
    for (let start = 0; start + block_size <= tokens.length; start += block_size) {
      hashes.push(JSON.stringify([cache_salt || null, tokens.slice(0, start + block_size)]));
    }
    return hashes;
  }

  // A block pool with prefix caching on (prefix_cache.py: PrefixCache).
  class PrefixCache extends BlockPool {
    constructor(num_gpu_blocks, block_size = BLOCK_SIZE) {
      super(num_gpu_blocks, block_size);
      this._cached = new Map(); // hash -> its blocks, first inserted first (BlockHashToBlockMap)
      this._hash_of = new Map(); // KVCacheBlock.block_hash
      this._ref_cnt = new Map(); // KVCacheBlock.ref_cnt of every block not free
      this._num_cached_block = new Map();
      this._stand_in = 0;
      this.preempted_hits = 0; // PrefixCacheStats, in tokens
      this.preempted_queries = 0;
      this.history = [];
    }

    lookup(prompt, cache_salt = null) {
      return this._hit(prompt, cache_salt);
    }

    _hit(tokens, cache_salt) {
      // The last prompt token is always recomputed: max_cache_hit_length = num_tokens - 1.
      const hashes = block_hashes(tokens, this.block_size, cache_salt)
        .slice(0, Math.floor((tokens.length - 1) / this.block_size));
      // The longest run of cached blocks from the first one: a miss ends it.
      const hit = [];
      for (const block_hash of hashes) {
        if (!this._cached.has(block_hash)) break;
        hit.push(this._cached.get(block_hash)[0]);
      }
      return [hit, hit.length * this.block_size];
    }

    // lookup, counted in the stats (KVCacheManager.get_computed_blocks).
    get_computed_blocks(tokens, { cache_salt = null, preempted = false } = {}) {
      const [hit, num_tokens] = this._hit(tokens, cache_salt);
      if (preempted) {
        this.preempted_queries += tokens.length;
        this.preempted_hits += num_tokens;
      } else {
        this.queries += tokens.length;
        this.hits += num_tokens;
      }
      return [hit, num_tokens];
    }

    // New blocks, plus the hit blocks a hit takes out of the free queue.
    blocks_to_allocate(request_id, num_tokens, hit = []) {
      const held = (this._tables.get(request_id) ?? []).length;
      const fresh = Math.max(blocks_for(num_tokens, this.block_size) - held - hit.length, 0);
      return fresh + hit.filter((block) => !this._ref_cnt.has(block)).length;
    }

    // Blocks for the computed tokens, the hit and num_new_tokens more; null, changing
    // nothing, if too few are free (KVCacheManager.allocate_slots).
    allocate_slots(request_id, tokens, num_computed_tokens, num_new_tokens, hit = [],
                   full_sequence_must_fit = false, cache_salt = null) {
      const computed = num_computed_tokens + hit.length * this.block_size;
      if (full_sequence_must_fit &&
          this.blocks_to_allocate(request_id, tokens.length, hit) > this.num_free_blocks) {
        return null;
      }
      const needed = this.blocks_to_allocate(request_id, computed + num_new_tokens, hit);
      if (needed > this.num_free_blocks) return null;
      if (!this._tables.has(request_id)) this._tables.set(request_id, []);
      const table = this._tables.get(request_id);
      if (hit.length) {
        this.touch(hit);
        table.push(...hit);
        this._num_cached_block.set(request_id, hit.length);
      }
      const added = this._take(blocks_for(computed + num_new_tokens, this.block_size) - table.length);
      table.push(...added);
      this._tokens.set(request_id, computed + num_new_tokens);
      // Only tokens the request already has are cached, never ones still to be sampled.
      this.cache_blocks(request_id, tokens, Math.min(computed + num_new_tokens, tokens.length),
                        cache_salt);
      return added;
    }

    // Lesson 2's allocate, with reference counts.
    allocate(request_id, num_tokens) {
      const held = this._tokens.get(request_id) ?? 0;
      if (num_tokens < held) throw new ValueError(`request ${request_id} holds ${held} tokens, not fewer`);
      return this.allocate_slots(request_id, [], held, num_tokens - held);
    }

    // A hit takes a free block out of the free queue, and counts one more user.
    touch(blocks) {
      for (const block of blocks) {
        if (!this._ref_cnt.has(block)) this._free.splice(this._free.indexOf(block), 1);
        this._ref_cnt.set(block, (this._ref_cnt.get(block) ?? 0) + 1);
      }
    }

    // New blocks from the head of the free queue; one that still had a hash loses it.
    _take(count) {
      const added = this._free.splice(0, count);
      for (const block of added) {
        this._ref_cnt.set(block, 1);
        const block_hash = this._hash_of.get(block);
        if (block_hash === undefined) continue;
        this._hash_of.delete(block);
        const blocks = this._cached.get(block_hash);
        blocks.splice(blocks.indexOf(block), 1);
        if (!blocks.length) this._cached.delete(block_hash);
      }
      return added;
    }

    // Hash the request's full blocks up to num_tokens that have no hash yet.
    cache_blocks(request_id, tokens, num_tokens, cache_salt = null) {
      const done = this._num_cached_block.get(request_id) ?? 0;
      const full = Math.floor(num_tokens / this.block_size);
      if (full <= done) return;
      const table = this._tables.get(request_id);
      const hashes = block_hashes(tokens.slice(0, full * this.block_size), this.block_size, cache_salt);
      for (let i = done; i < full; i += 1) {
        this._hash_of.set(table[i], hashes[i]);
        if (!this._cached.has(hashes[i])) this._cached.set(hashes[i], []);
        this._cached.get(hashes[i]).push(table[i]);
      }
      this._num_cached_block.set(request_id, full);
    }

    // Each block has one user fewer, last block first; one no one uses goes back to the
    // free queue: to its head without a hash, to its tail with one.
    free(request_id) {
      const table = this._table_of(request_id);
      this._tables.delete(request_id);
      this._tokens.delete(request_id);
      this._num_cached_block.delete(request_id);
      const unhashed = [];
      const hashed = [];
      for (const block of [...table].reverse()) {
        this._ref_cnt.set(block, this._ref_cnt.get(block) - 1);
        if (this._ref_cnt.get(block)) continue;
        this._ref_cnt.delete(block);
        (this._hash_of.has(block) ? hashed : unhashed).push(block);
      }
      this._free.unshift(...unhashed);
      this._free.push(...hashed);
    }

    ref_cnt(block) {
      return this._ref_cnt.get(block) ?? 0;
    }

    // Admit a request, compute it and finish it: the prompt tokens that came from the
    // cache, or null, changing nothing, if its blocks are more than the free ones.
    run(request_id, prompt, max_tokens = 1, { output = null, cache_salt = null } = {}) {
      if (output === null) {
        this._stand_in -= max_tokens;
        output = [];
        for (let t = this._stand_in; t < this._stand_in + max_tokens; t += 1) output.push(t);
      }
      // 1. The cached blocks it starts from.
      const [hit, cached_tokens] = this.lookup(prompt, cache_salt);
      // 2. Refused if its blocks are more than the free ones.
      const computed = prompt.length + max_tokens - 1;
      if (this.blocks_to_allocate(request_id, computed, hit) > this.num_free_blocks) return null;
      // 3. The lookup counts in the stats once the request fits.
      this.get_computed_blocks(prompt, { cache_salt });
      // 4. Blocks for all it computes, and a hash for each full one.
      const cached_before = new Set(this._hash_of.keys());
      const tokens = prompt.concat(output).slice(0, computed);
      const added = this.allocate_slots(request_id, tokens, 0, computed - cached_tokens, hit,
                                        false, cache_salt);
      // 5. What it did; then it finishes and its blocks go back.
      this.history.push({
        request_id, prompt_tokens: prompt.length, cached_tokens,
        block_table: [...this._tables.get(request_id)], hit_blocks: hit, new_blocks: added,
        evicted: added.filter((block) => cached_before.has(block)),
      });
      this.free(request_id);
      return cached_tokens;
    }

    // Forget every hash; refused (false) while a request holds blocks.
    reset_prefix_cache() {
      if (this._tables.size) return false;
      this._cached.clear();
      this._hash_of.clear();
      return true;
    }

    get hashed() { return new Set(this._hash_of.keys()); }

    // Cached blocks, by id, and their hash.
    get cached_blocks() {
      return new Map([...this._hash_of].sort(([a], [b]) => a - b));
    }

    get hit_rate() {
      if (!this.queries) throw new ValueError("no request has run yet: the hit rate is 0 of 0 tokens");
      return this.hits / this.queries;
    }
  }

  return { block_hashes, PrefixCache };
})();
