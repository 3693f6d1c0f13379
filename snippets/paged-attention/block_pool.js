// block_pool.py's JavaScript twin, for the lesson's components: the same names, the same
// rules in the same order, null where the Python returns None. tests/test_js_mirrors.py runs
// both, in Node, on the same workloads and compares them step by step. A component script
// reads it as courseModules.block_pool (coursekit/components.py ships it before the script).
(globalThis.courseModules ??= {}).block_pool ??= (() => {
  // Tokens per block: vllm/config/cache.py: CacheConfig.DEFAULT_BLOCK_SIZE
  const BLOCK_SIZE = 16;

  // Python's ValueError: misuse the lesson's code refuses. key and values name the message
  // a component shows for it (its labels.yml), message is the Python one.
  class ValueError extends Error {
    constructor(message, key = "invalid", values = {}) {
      super(message);
      this.name = "ValueError";
      this.key = key;
      this.values = values;
    }
  }

  function whole(name, value, least) {
    if (!Number.isInteger(value) || value < least) {
      throw new ValueError(`${name} must be an integer of at least ${least}, got ${value}`);
    }
    return value;
  }

  // Blocks that hold num_tokens tokens: whole blocks, rounded up (cdiv in
  // SingleTypeKVCacheManager.allocate_new_blocks).
  function blocks_for(num_tokens, block_size = BLOCK_SIZE) {
    whole("num_tokens", num_tokens, 0);
    return Math.ceil(num_tokens / whole("block_size", block_size, 1));
  }

  // A token's slot: its block's id times the block size, plus its offset in the block
  // (vllm/v1/worker/gpu/block_table.py: _compute_slot_mappings_kernel).
  function slot_of(block_table, position, block_size = BLOCK_SIZE) {
    whole("position", position, 0);
    if (position >= block_table.length * block_size) {
      throw new ValueError(`position ${position} is past the ${block_table.length} blocks of this block table`);
    }
    return block_table[Math.floor(position / block_size)] * block_size + (position % block_size);
  }

  // num_gpu_blocks blocks of block_size tokens; block 0 is the null block. enable_caching:
  // every full block gets a hash, so a finished request's full blocks go to the queue's tail.
  class BlockPool {
    constructor(num_gpu_blocks, block_size = BLOCK_SIZE, enable_caching = false) {
      this.num_gpu_blocks = whole("num_gpu_blocks", num_gpu_blocks, 1);
      this.block_size = whole("block_size", block_size, 1);
      this.enable_caching = Boolean(enable_caching);
      // The free queue starts ordered by block id (FreeKVCacheBlockQueue.__init__).
      this._free = [];
      for (let block = 0; block < num_gpu_blocks; block += 1) this._free.push(block);
      // Block 0 is the null block, never handed out or freed (BlockPool.__init__).
      this.null_block = this._free.shift();
      this._tables = new Map(); // SingleTypeKVCacheManager.req_to_blocks
      this._tokens = new Map();
      this._hashed = new Set(); // blocks with a prefix-cache hash
      this.hits = 0; // prefix cache lookups, in tokens: none here
      this.queries = 0;
    }

    _table_of(request_id) {
      if (!this._tables.has(request_id)) {
        throw new ValueError(`unknown request ${request_id}: it holds no blocks`);
      }
      return this._tables.get(request_id);
    }

    // Grow the request's block table to hold num_tokens tokens in total; the block ids it
    // added, or null, changing nothing, if too few blocks are free (allocate_slots).
    allocate(request_id, num_tokens) {
      if (typeof request_id !== "string" || !request_id) {
        throw new ValueError(`request_id must be a non-empty string, got ${request_id}`);
      }
      whole("num_tokens", num_tokens, 0);
      const held = this._tokens.get(request_id) ?? 0;
      if (num_tokens < held) {
        throw new ValueError(`request ${request_id} holds ${held} tokens: a block table only grows`);
      }
      const table = this._tables.get(request_id) ?? [];
      // New blocks = blocks needed - blocks held (get_num_blocks_to_allocate).
      const needed = blocks_for(num_tokens, this.block_size) - table.length;
      if (needed > this.num_free_blocks) return null;
      // From the head of the free queue (get_new_blocks); a block loses its hash.
      const added = this._free.splice(0, needed);
      for (const block of added) this._hashed.delete(block);
      // Appended, never rewritten (BlockTables.append_block_ids).
      this._tables.set(request_id, table.concat(added));
      this._tokens.set(request_id, num_tokens);
      if (this.enable_caching) { // full blocks get a hash: BlockPool.cache_full_blocks
        const full = Math.floor(num_tokens / this.block_size);
        for (const block of this._tables.get(request_id).slice(0, full)) this._hashed.add(block);
      }
      return added;
    }

    // The request finished (or was preempted): all its blocks back, last block first;
    // unhashed ones to the head of the queue, hashed ones to its tail (free_blocks).
    free(request_id) {
      const ordered = [...this._table_of(request_id)].reverse();
      this._tables.delete(request_id);
      this._tokens.delete(request_id);
      this._free.unshift(...ordered.filter((block) => !this._hashed.has(block)));
      this._free.push(...ordered.filter((block) => this._hashed.has(block)));
    }

    // What lesson 3's scheduler calls: KVCacheManager with prefix caching off.
    // Python's keyword arguments come as one object: { preempted }.
    get_computed_blocks(tokens, { preempted = false } = {}) {
      return [[], 0];
    }

    // Blocks for the computed tokens and num_new_tokens more; null, changing nothing, if
    // too few are free. full_sequence_must_fit: all tokens must fit (a waiting request).
    allocate_slots(request_id, tokens, num_computed_tokens, num_new_tokens,
                   new_computed_blocks = [], full_sequence_must_fit = false) {
      const held = (this._tables.get(request_id) ?? []).length;
      const whole_blocks = blocks_for(tokens.length, this.block_size);
      if (full_sequence_must_fit && whole_blocks - held > this.num_free_blocks) return null;
      return this.allocate(request_id, num_computed_tokens + num_new_tokens);
    }

    cache_blocks(request_id, tokens, num_tokens) {} // nothing to cache with caching off

    block_table(request_id) {
      return [...this._table_of(request_id)];
    }

    num_tokens(request_id) {
      this._table_of(request_id);
      return this._tokens.get(request_id);
    }

    // The KV cache slot of the request's token at position (0-based).
    slot(request_id, position) {
      const held = this.num_tokens(request_id);
      if (!Number.isInteger(position) || position < 0 || position >= held) {
        throw new ValueError(`position must be one of the ${held} tokens of request ${request_id}`);
      }
      return slot_of(this._tables.get(request_id), position, this.block_size);
    }

    get requests() { return [...this._tables.keys()]; }
    get free_queue() { return [...this._free]; } // head (handed out next) first
    get hashed() { return new Set(this._hashed); }
    get num_free_blocks() { return this._free.length; }

    // vllm:kv_cache_usage_perc, from 0 to 1: the null block never counts (get_usage).
    get usage() {
      const total_gpu_blocks = this.num_gpu_blocks - 1;
      if (!total_gpu_blocks) return 0;
      return 1.0 - this.num_free_blocks / total_gpu_blocks;
    }
  }

  return { BLOCK_SIZE, ValueError, whole, blocks_for, slot_of, BlockPool };
})();
