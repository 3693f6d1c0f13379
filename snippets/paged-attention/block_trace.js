// block_trace.py's JavaScript twin, for the block table component: run and encode; not the
// worked trace itself (the component gets it from data.py), nor said and state, the words the
// Python prints (the component's are in its labels.yml). The same names, the same rules in
// the same order; a trace is a list of [request, tokens], null where the Python has None (the
// request finished).
// tests/lessons/paged-attention/test_block_trace_twin.py runs both in Node on the same
// seeded traces and compares them after every step.
(globalThis.courseModules ??= {}).block_trace ??= (() => {
  const { BLOCK_SIZE, BlockPool, blocks_for } = courseModules.block_pool;

  // Replay a trace; yields [step, pool, what happened] at the start (step 0) and after each
  // step, with the one pool. What happened: its kind (start, grew, refused, finished), the
  // request r, its tokens n, the blocks the step added or freed (last block first), the
  // blocks a refused step needed and those free.
  function* run(trace, num_gpu_blocks, enable_caching = true, block_size = BLOCK_SIZE) {
    const pool = new BlockPool(num_gpu_blocks, block_size, enable_caching);
    yield [0, pool, { kind: "start", null: pool.null_block }];
    for (const [index, [request, tokens]] of trace.entries()) {
      const step = index + 1;
      if (tokens === null) {
        const freed = pool.block_table(request).reverse();
        pool.free(request);
        yield [step, pool, { kind: "finished", r: request, blocks: freed }];
        continue;
      }
      const held = pool.requests.includes(request) ? pool.block_table(request).length : 0;
      const added = pool.allocate(request, tokens);
      const happened = added === null // too few free blocks: nothing changed
        ? { kind: "refused", needed: blocks_for(tokens, block_size) - held, free: pool.num_free_blocks }
        : { kind: "grew", blocks: added };
      yield [step, pool, { ...happened, r: request, n: tokens }];
    }
  }

  // A trace in the words of the block table component's link: A:20 (A holds 20 tokens),
  // A:free (A finishes).
  const encode = (trace) => trace.map(([r, n]) => `${r}:${n === null ? "free" : n}`).join(",");

  return { run, encode };
})();
