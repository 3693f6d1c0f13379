// tp_memory.py's JavaScript twin, for the lesson's gpu-layout component: the same names,
// the same rules in the same order, the same error messages, null where the Python returns
// None. tests/lessons/parallelism/test_tp_memory_twin.py runs both, in Node, on the same
// configs and layouts and compares them. A component script reads it as
// courseModules.tp_memory (coursekit/components.py ships it before the script).
(globalThis.courseModules ??= {}).tp_memory ??= (() => {
  // vllm/model_executor/layers/vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE
  const VOCAB_PADDING = 64;
  const DENSE = ["Qwen2ForCausalLM", "Qwen3ForCausalLM", "LlamaForCausalLM", "MistralForCausalLM"];
  // Tokens per KV cache block: vLLM 0.26.0's default (kv_capacity.py: BLOCK_SIZE).
  const BLOCK_SIZE = 16;

  // Python's ValueError: what the lesson's code refuses, with the Python's message.
  class ValueError extends Error {
    constructor(message) {
      super(message);
      this.name = "ValueError";
    }
  }

  // Python's // on numbers of either sign: the floor.
  const floorDiv = (a, b) => Math.floor(a / b);
  const isInt = (value) => Number.isInteger(value);

  // vocab_parallel_embedding.py: pad_vocab_size: up to a multiple of pad_to.
  function pad_vocab_size(vocab_size, pad_to = VOCAB_PADDING) {
    return -floorDiv(-vocab_size, pad_to) * pad_to;
  }

  // [rows this rank holds, rows of real tokens among them] (VocabParallelEmbedding).
  function vocab_rows(vocab_size, tp, rank) {
    const padded = pad_vocab_size(vocab_size);
    if (padded % tp) throw new ValueError(`${padded} is not divisible by ${tp}`);
    const per_rank = floorDiv(padded, tp);
    const start = rank * per_rank;
    return [per_rank, Math.max(0, Math.min(start + per_rank, vocab_size) - start)];
  }

  // vllm/config/model.py: ModelConfig.get_num_kv_heads: at least one per GPU.
  const kv_heads_per_rank = (total_kv_heads, tp) => Math.max(1, floorDiv(total_kv_heads, tp));

  // QKVParallelLinear's num_kv_head_replicas.
  const kv_head_replicas = (total_kv_heads, tp) =>
    (tp >= total_kv_heads ? floorDiv(tp, total_kv_heads) : 1);

  // The error vLLM stops with for this TP size, or null, in the order it checks.
  function refusal(config, tp) {
    if (!isInt(tp) || tp < 1) {
      throw new ValueError(`tensor parallel size must be a positive integer, got ${tp}`);
    }
    const heads = config.num_attention_heads, kv = config.num_key_value_heads;
    if (heads % tp) {
      return `ValueError: Total number of attention heads (${heads}) must be divisible` +
        ` by tensor parallel size (${tp}).`;
    }
    if ((kv >= tp && kv % tp) || (kv < tp && tp % kv)) {
      return `AssertionError at model build: ${kv} KV heads and TP ${tp}`;
    }
    for (const size of [config.intermediate_size, pad_vocab_size(config.vocab_size)]) {
      if (size % tp) return `AssertionError at model build: ${size} is not divisible by ${tp}`;
    }
    return null;
  }

  // vllm/distributed/utils.py: get_pp_indices: the layers [start, end) of a stage.
  function pp_indices(num_layers, pp_rank, pp_size, partition = null) {
    if (!(pp_rank >= 0 && pp_rank < pp_size)) {
      throw new ValueError(`pp_rank must be in [0, ${pp_size}), got ${pp_rank}`);
    }
    let parts;
    if (partition !== null) {
      parts = partition.split(",").map((layers) => {
        // Python's int(): an optional sign and digits, spaces around them.
        if (!/^\s*[+-]?\d+\s*$/.test(layers)) {
          throw new ValueError(`Invalid partition string: ${partition}`);
        }
        return Number(layers);
      });
      if (parts.length !== pp_size) {
        throw new ValueError(`len(partitions)=${parts.length} does not match pp_size=${pp_size}.`);
      }
      const sum = parts.reduce((a, b) => a + b, 0);
      if (sum !== num_layers) {
        throw new ValueError(`sum(partitions)=${sum} does not match num_hidden_layers=${num_layers}.`);
      }
    } else {
      parts = Array(pp_size).fill(floorDiv(num_layers, pp_size));
      for (let i = 2; i < (num_layers % pp_size) + 2; i++) parts[parts.length - i] += 1;
    }
    const start = parts.slice(0, pp_rank).reduce((a, b) => a + b, 0);
    return [start, start + parts[pp_rank]];
  }

  // What one GPU holds: stage pp_rank, tensor rank tp_rank (tp_memory.py: Rank).
  class Rank {
    constructor(pp_rank, tp_rank, layers, heads, kv_heads, vocab_rows, parameters) {
      Object.assign(this, { pp_rank, tp_rank, layers, heads, kv_heads, vocab_rows, parameters });
    }

    get weight_bytes() {
      return 2 * this.parameters;
    }
  }

  function _dense(config) {
    const arch = (config.architectures ?? [""])[0];
    if (!DENSE.includes(arch) || "num_experts" in config || "kv_lora_rank" in config) {
      throw new ValueError(`tp_memory counts dense ${DENSE.join(", ")} models, not ${arch}`);
    }
    const h = config.hidden_size, heads = config.num_attention_heads;
    return {
      h,
      head_dim: config.head_dim || floorDiv(h, heads),
      heads,
      kv: config.num_key_value_heads ?? heads,
      inter: config.intermediate_size,
      arch,
    };
  }

  // One decoder layer's parameters on one TP rank.
  function layer_parameters(config, tp) {
    const c = _dense(config);
    const h = c.h, d = c.head_dim;
    const q = floorDiv(c.heads, tp) * d, kv = kv_heads_per_rank(c.kv, tp) * d;
    const qkv = h * (q + 2 * kv); // column-parallel: this rank's heads, KV heads repeated
    const o = q * h; // row-parallel: this rank's slice of the heads' outputs
    const mlp = 3 * h * floorDiv(c.inter, tp); // gate and up by columns, down by rows
    const norms = 2 * h; // input and post-attention RMSNorm, on every rank
    let bias = c.arch === "Qwen2ForCausalLM" ? q + 2 * kv : 0; // q, k, v biases
    if (config.attention_bias) bias = q + 2 * kv + h; // and o_proj's, not split
    const qk_norm = c.arch === "Qwen3ForCausalLM" ? 2 * d : 0; // per-head q/k norms
    return qkv + o + mlp + norms + bias + qk_norm;
  }

  // Every GPU's share, stage by stage, rank by rank; ValueError with vLLM's error for a TP
  // size it refuses.
  function layout(config, tp = 1, pp = 1) {
    const why = refusal(config, tp);
    if (why) throw new ValueError(`vLLM refuses TP ${tp}: ${why}`);
    const layers = config.num_hidden_layers;
    if (!isInt(pp) || !(pp >= 1 && pp <= layers)) {
      throw new ValueError(`pipeline size must be an integer from 1 to ${layers}, got ${pp}`);
    }
    const c = _dense(config), tied = Boolean(config.tie_word_embeddings);
    const ranks = [];
    for (let stage = 0; stage < pp; stage++) {
      const [start, end] = pp_indices(layers, stage, pp);
      const first = stage === 0, last = stage === pp - 1;
      for (let rank = 0; rank < tp; rank++) {
        const [rows] = vocab_rows(config.vocab_size, tp, rank);
        // The embedding on the first stage (and on the last when lm_head is that table);
        // lm_head and the final norm on the last.
        const tables = Number(first || (tied && last)) + Number(last && !tied);
        let n = (end - start) * layer_parameters(config, tp);
        n += tables * rows * c.h + (last ? c.h : 0);
        ranks.push(new Rank(stage, rank, [start, end], floorDiv(c.heads, tp),
                            kv_heads_per_rank(c.kv, tp), tables ? rows : 0, n));
      }
    }
    return ranks;
  }

  // kv_capacity.predict for one GPU, its layers and its KV heads in 16-bit:
  // { num_blocks, tokens, max_concurrency } as lesson 1's Capacity.
  function kv_tokens(config, rank, kv_memory_bytes, max_model_len) {
    const c = _dense(config);
    const layers = rank.layers[1] - rank.layers[0];
    const per_token = 2 * layers * rank.kv_heads * c.head_dim * 2;
    const num_blocks = floorDiv(kv_memory_bytes, BLOCK_SIZE * per_token);
    const max_concurrency = num_blocks / -floorDiv(-max_model_len, BLOCK_SIZE);
    return { num_blocks, tokens: Math.trunc(max_concurrency * max_model_len), max_concurrency };
  }

  return { VOCAB_PADDING, DENSE, BLOCK_SIZE, ValueError, pad_vocab_size, vocab_rows,
           kv_heads_per_rank, kv_head_replicas, refusal, pp_indices, Rank, _dense,
           layer_parameters, layout, kv_tokens };
})();
