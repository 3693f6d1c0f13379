// offload.py's JavaScript twin, for the lesson's component: the CPU tier (CPUOffloadingManager
// with its LRU and ARC policies; not its events, stats or failed stores, which the component
// does not show) and OffloadedCache, which drives it after lesson 5's GPU
// prefix cache (prefix_cache.js) as the scheduler side of vLLM 0.26.0's OffloadingConnector
// does. The same names, the same rules in the same order, null where the Python returns
// None; a Map keeps its keys in insertion order as the Python's OrderedDict does. A key is
// prefix_cache.js's block hash (the prefix a block closes), not SHA-256.
// tests/lessons/kv-offloading/test_offload_js.py runs both in Node on the same seeded
// operations and compares them after every one.
(globalThis.courseModules ??= {}).offload ??= (() => {
  const { ValueError, blocks_for } = courseModules.block_pool;
  const { PrefixCache, block_hashes } = courseModules.prefix_cache;

  const [HIT, HIT_PENDING, MISS] = ["HIT", "HIT_PENDING", "MISS"]; // LookupResult

  // One CPU block: ref_cnt -1 while its store is in flight, then the loads reading it.
  class BlockStatus {
    constructor(block_id) {
      this.ref_cnt = -1;
      this.block_id = block_id;
    }

    get is_ready() {
      return this.ref_cnt >= 0;
    }
  }

  // Move a key to the end of an ordered Map (OrderedDict.move_to_end).
  function moveToEnd(map, key) {
    const value = map.get(key);
    map.delete(key);
    map.set(key, value);
  }

  // vllm/v1/kv_offload/cpu/policies/lru.py: LRUCachePolicy (offload.py: LRUPolicy).
  class LRUPolicy {
    constructor(capacity) {
      this.blocks = new Map();
      this.evictable = new Map(); // key -> null, least recently used first
    }

    get(key) {
      return this.blocks.get(key) ?? null;
    }

    insert(key, block) {
      this.blocks.set(key, block);
    }

    remove(key) {
      this.blocks.delete(key);
      this.evictable.delete(key);
    }

    // Last key first, so that a request's first block ends most recent.
    touch(keys) {
      for (const key of [...keys].reverse()) {
        if (this.evictable.has(key)) moveToEnd(this.evictable, key);
      }
    }

    // [key, block] of the n least recently used idle blocks outside protect, or null.
    evict(n, protect) {
      const chosen = [...this.evictable.keys()].filter((key) => !protect.has(key)).slice(0, n);
      if (chosen.length < n) return null;
      for (const key of chosen) this.evictable.delete(key);
      return chosen.map((key) => {
        const block = this.blocks.get(key);
        this.blocks.delete(key);
        return [key, block];
      });
    }

    mark_evictable(key) {
      this.evictable.set(key, null);
    }

    mark_non_evictable(key) {
      this.evictable.delete(key);
    }
  }

  // vllm/v1/kv_offload/cpu/policies/arc.py: ARCCachePolicy (offload.py: ARCPolicy): T1 once,
  // T2 again, B1 and B2 the ghosts of each.
  class ARCPolicy {
    constructor(capacity) {
      this.capacity = capacity;
      this.target_t1_size = 0;
      this.t1 = new Map();
      this.t2 = new Map();
      this.b1 = new Map();
      this.b2 = new Map();
    }

    get(key) {
      return this.t1.get(key) ?? this.t2.get(key) ?? null;
    }

    insert(key, block) {
      this.t1.set(key, block);
      this.b1.delete(key);
      this.b2.delete(key);
    }

    remove(key) {
      if (!this.t1.delete(key)) this.t2.delete(key);
    }

    touch(keys) {
      for (const key of [...keys].reverse()) {
        if (this.t1.has(key)) {
          const block = this.t1.get(key);
          this.t1.delete(key);
          // A block whose store is in flight stays in T1; a readable one goes to T2.
          (block.is_ready ? this.t2 : this.t1).set(key, block);
        } else if (this.t2.has(key)) {
          moveToEnd(this.t2, key);
        } else if (this.b1.has(key)) {
          const delta = Math.max(1, this.b2.size / this.b1.size);
          this.target_t1_size = Math.min(this.target_t1_size + delta, this.capacity);
          moveToEnd(this.b1, key);
        } else if (this.b2.has(key)) {
          const delta = Math.max(1, this.b1.size / this.b2.size);
          this.target_t1_size = Math.max(this.target_t1_size - delta, 0);
          moveToEnd(this.b2, key);
        }
      }
    }

    // n idle blocks outside protect: from T1 while T1 holds at least its target, else from
    // T2; null if there are not n. Evicted keys become ghosts, each list capped at capacity.
    evict(n, protect) {
      const chosen = []; // [key, from T1]
      const taken = new Set();
      let t1_size = this.t1.size;
      const first_idle = (list) => {
        for (const [key, block] of list) {
          if (block.ref_cnt === 0 && !protect.has(key) && !taken.has(key)) return key;
        }
        return null;
      };
      for (let i = 0; i < n; i += 1) {
        let key = null;
        let from_t1 = false;
        if (t1_size >= Math.trunc(this.target_t1_size)) {
          key = first_idle(this.t1);
          if (key !== null) {
            from_t1 = true;
            t1_size -= 1;
          }
        }
        if (key === null) {
          key = first_idle(this.t2);
          if (key === null) return null;
        }
        chosen.push([key, from_t1]);
        taken.add(key);
      }
      const evicted = [];
      for (const [key, from_t1] of chosen) {
        const [list, ghosts] = from_t1 ? [this.t1, this.b1] : [this.t2, this.b2];
        evicted.push([key, list.get(key)]);
        list.delete(key);
        ghosts.set(key, null);
      }
      for (const ghosts of [this.b1, this.b2]) {
        while (ghosts.size > this.capacity) ghosts.delete(ghosts.keys().next().value);
      }
      return evicted;
    }

    mark_evictable() {}

    mark_non_evictable() {}
  }

  const POLICIES = { lru: LRUPolicy, arc: ARCPolicy };

  // vllm/v1/kv_offload/cpu/manager.py: CPUOffloadingManager (offload.py: CPUOffloadingManager).
  class CPUOffloadingManager {
    constructor(num_blocks, policy = "lru") {
      if (!Number.isInteger(num_blocks) || num_blocks < 0) {
        throw new ValueError(`num_blocks must be an integer >= 0, got ${num_blocks}`);
      }
      if (!Object.hasOwn(POLICIES, policy)) {
        throw new ValueError(`policy must be one of arc, lru, got ${policy}`);
      }
      this.num_blocks = num_blocks;
      this.policy = new POLICIES[policy](num_blocks);
      this.num_allocated = 0;
      this.free_list = [];
      this.num_evictable = 0;
      this.num_write_pending = 0;
    }

    lookup(key) {
      const block = this.policy.get(key);
      if (block === null) return MISS;
      return block.is_ready ? HIT : HIT_PENDING;
    }

    // The CPU blocks to copy to the GPU; each is protected from eviction until complete_load.
    prepare_load(keys) {
      const block_ids = [];
      for (const key of keys) {
        const block = this.policy.get(key);
        if (block === null || !block.is_ready) throw new ValueError(`block ${key} is not readable in the tier`);
        if (block.ref_cnt === 0) {
          this.policy.mark_non_evictable(key);
          this.num_evictable -= 1;
        }
        block.ref_cnt += 1;
        block_ids.push(block.block_id);
      }
      return block_ids;
    }

    touch(keys) {
      this.policy.touch(keys);
    }

    complete_load(keys) {
      for (const key of keys) {
        const block = this.policy.get(key);
        if (block === null || block.ref_cnt <= 0) throw new ValueError(`block ${key} has no load in flight`);
        block.ref_cnt -= 1;
        if (block.ref_cnt === 0) {
          this.num_evictable += 1;
          this.policy.mark_evictable(key);
        }
      }
    }

    num_free() {
      return this.free_list.length + this.num_blocks - this.num_allocated;
    }

    // Room for the keys the tier does not hold yet: free blocks first, then evictions, never
    // among keys themselves; null if not enough blocks are idle.
    prepare_store(keys) {
      keys = [...keys];
      const keys_to_store = keys.filter((key) => this.policy.get(key) === null);
      if (!keys_to_store.length) return { keys_to_store: [], block_ids: [], evicted_keys: [] };
      const to_evict = [];
      const num_to_evict = keys_to_store.length - this.num_free();
      if (num_to_evict > 0) {
        if (num_to_evict > this.num_evictable) return null;
        const evicted = this.policy.evict(num_to_evict, new Set(keys));
        if (evicted === null) return null;
        this.num_evictable -= evicted.length;
        for (const [key, block] of evicted) {
          this.free_list.push(block.block_id);
          to_evict.push(key);
        }
      }
      // Never used block ids first, then the freed ones, last freed first.
      const fresh = Math.min(keys_to_store.length, this.num_blocks - this.num_allocated);
      const ids = [];
      for (let id = this.num_allocated; id < this.num_allocated + fresh; id += 1) ids.push(id);
      this.num_allocated += fresh;
      while (ids.length < keys_to_store.length) ids.push(this.free_list.pop());
      keys_to_store.forEach((key, i) => this.policy.insert(key, new BlockStatus(ids[i])));
      this.num_write_pending += keys_to_store.length;
      return { keys_to_store, block_ids: ids, evicted_keys: to_evict };
    }

    // The worker's copies are done: the blocks become readable and evictable.
    complete_store(keys) {
      for (const key of keys) {
        const block = this.policy.get(key);
        if (block === null || block.is_ready) continue;
        this.num_write_pending -= 1;
        block.ref_cnt = 0;
        this.num_evictable += 1;
        this.policy.mark_evictable(key);
      }
    }
  }

  // What one request found and moved (offload.py: Visit).
  function recomputed(visit) {
    return visit.prompt_tokens - Math.min(visit.gpu_hit + visit.cpu_hit, visit.prompt_tokens - 1);
  }

  // A GPU prefix cache with a CPU tier behind it, one request at a time
  // (offload.py: OffloadedCache).
  class OffloadedCache {
    constructor(num_gpu_blocks, num_cpu_blocks, policy = "lru") {
      this.gpu = new PrefixCache(num_gpu_blocks);
      this.cpu = new CPUOffloadingManager(num_cpu_blocks, policy);
      this.block_size = this.gpu.block_size;
    }

    // Tokens past the GPU's hit the CPU tier can give, in whole blocks.
    num_hit_tokens(keys, num_tokens, gpu_hit) {
      const size = this.block_size;
      const max_hit = Math.min(num_tokens, keys.length * size);
      if (max_hit - gpu_hit < size) return 0;
      const start = Math.floor(gpu_hit / size);
      let hits = 0;
      for (const key of keys.slice(start, blocks_for(max_hit, size))) {
        if (this.cpu.lookup(key) !== HIT) break;
        hits += 1;
      }
      if (hits === 0) return 0;
      const added = Math.min(max_hit, size * (start + hits)) - gpu_hit;
      return added >= size ? added : 0;
    }

    visit(request_id, prompt) {
      const keys = block_hashes(prompt, this.block_size);
      const gpu_hit = this.gpu.lookup(prompt)[1];
      const cpu_hit = this.num_hit_tokens(keys, prompt.length, gpu_hit);
      this.cpu.touch(keys);
      let first_to_store = 0;
      let loaded = [];
      if (cpu_hit) {
        first_to_store = blocks_for(gpu_hit + cpu_hit, this.block_size);
        loaded = keys.slice(Math.floor(gpu_hit / this.block_size), first_to_store);
        this.cpu.prepare_load(loaded);
        this.cpu.complete_load(loaded);
      }
      let stored = { keys_to_store: [], block_ids: [], evicted_keys: [] };
      if (keys.length > first_to_store) stored = this.cpu.prepare_store(keys.slice(first_to_store));
      let failed = false;
      if (stored === null) {
        failed = true;
        stored = { keys_to_store: [], block_ids: [], evicted_keys: [] };
      } else if (stored.keys_to_store.length) {
        this.cpu.touch(keys);
      }
      this.gpu.run(request_id, prompt, 1);
      this.cpu.complete_store(stored.keys_to_store);
      const visit = {
        request_id, prompt_tokens: prompt.length, gpu_hit, cpu_hit, loaded: loaded.length,
        stored: stored.keys_to_store.length, evicted: stored.evicted_keys.length, store_failed: failed,
      };
      visit.recomputed = recomputed(visit);
      return visit;
    }
  }

  return { HIT, HIT_PENDING, MISS, BlockStatus, LRUPolicy, ARCPolicy, POLICIES, CPUOffloadingManager,
           OffloadedCache };
})();
