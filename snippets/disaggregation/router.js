// router.py's JavaScript twin, for the lesson's component: its Replica (lesson 3's
// scheduler on lesson 5's prefix cache, through their twins) and choose, the four routing
// policies, with the Python's names and rules, a ValueError where it raises one. Two
// differences. A replica has no clock: the Python times each step with lesson 3's roofline
// (chunked_prefill.step_seconds), which the component does not show, so this twin keeps
// no `now` and no token times, and its caller decides when each replica steps. And
// prefix_hash needs the SHA-256 of a prompt's first blocks, which the prefix cache's twin
// does not compute (its hash is the prefix itself): the caller hands in the number Python
// takes from it, by the twin's hash of those blocks. tests/lessons/disaggregation/
// test_router_twin.py runs both in Node on the same seeded operations and compares them.
(globalThis.courseModules ??= {}).router ??= (() => {
  const { ValueError } = courseModules.block_pool;
  const { PrefixCache, block_hashes } = courseModules.prefix_cache;
  const { Scheduler, SchedulerConfig } = courseModules.scheduler;

  const BLOCK_SIZE = 16;
  const PREFIX_BLOCKS = 4; // prefix_hash: the blocks whose hash picks the replica
  const [BALANCE_ABS, BALANCE_REL] = [64, 1.5]; // cache_aware: SGLang router's documented defaults
  const POLICIES = ["round_robin", "least_loaded", "prefix_hash", "cache_aware"];

  // One engine: lesson 3's scheduler with lesson 5's prefix cache (router.py: Replica).
  class Replica {
    constructor(name, num_gpu_blocks, settings = {}) {
      this.name = name;
      this.cache = new PrefixCache(num_gpu_blocks, BLOCK_SIZE);
      this.scheduler = new Scheduler(new SchedulerConfig(settings), this.cache);
      this.sent = new Set(); // block hashes the router sent here (cache_aware)
    }

    get busy() {
      return Boolean(this.scheduler.waiting.length || this.scheduler.running.length);
    }

    get load() {
      return this.scheduler.waiting.length + this.scheduler.running.length;
    }

    // The router sends it a request (and notes its block hashes).
    add(request) {
      for (const block_hash of block_hashes(request.prompt, BLOCK_SIZE)) this.sent.add(block_hash);
      this.scheduler.add_request(request);
    }

    // Step until every request it holds is done.
    finish() {
      while (this.busy) this.step();
    }

    // One engine step; returns the requests that finished in it.
    step() {
      const [scheduled] = this.scheduler.schedule();
      return this.scheduler.update_from_output(scheduled)[1];
    }
  }

  // The replica a policy sends the number-th request to. prefix_numbers: the twin's hash
  // of a prompt's first PREFIX_BLOCKS blocks -> the number (a BigInt) Python reads from the
  // first 8 bytes of their SHA-256; needed by prefix_hash only.
  function choose(policy, replicas, prompt, number, prefix_numbers = new Map()) {
    if (policy === "round_robin") return number % replicas.length;
    const loads = replicas.map((r) => r.load);
    const least = loads.indexOf(Math.min(...loads));
    if (policy === "least_loaded") return least;
    const hashes = block_hashes(prompt, BLOCK_SIZE);
    if (policy === "prefix_hash") {
      if (hashes.length < PREFIX_BLOCKS) return least; // too short to have a prefix worth keeping
      const value = prefix_numbers.get(hashes[PREFIX_BLOCKS - 1]);
      if (value === undefined) {
        throw new ValueError("prefix_hash needs the SHA-256 number of this prompt's first blocks, from Python");
      }
      return Number(value % BigInt(replicas.length));
    }
    if (policy === "cache_aware") {
      const most = Math.max(...loads);
      const fewest = Math.min(...loads);
      if (most - fewest > BALANCE_ABS && most > BALANCE_REL * fewest) return least;
      const matched = replicas.map((replica) => {
        let run = 0;
        while (run < hashes.length && replica.sent.has(hashes[run])) run += 1;
        return run;
      });
      const best = Math.max(...matched);
      if (best === 0) return least;
      // The first of the best matches with the fewest requests (Python's min by load).
      let chosen = null;
      matched.forEach((m, i) => {
        if (m === best && (chosen === null || loads[i] < loads[chosen])) chosen = i;
      });
      return chosen;
    }
    throw new ValueError(`policy must be one of ${POLICIES.join(", ")}, got ${policy}`);
  }

  return { BLOCK_SIZE, PREFIX_BLOCKS, BALANCE_ABS, BALANCE_REL, POLICIES, Replica, choose };
})();
