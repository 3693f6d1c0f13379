"""tp_memory.js, the JavaScript twin the gpu-layout component splits a model with, does what
tp_memory.py does, in Node: on the Qwen2.5 presets and seeded random configs (the
conformance test's kind: head counts that divide and do not, tied tables, odd vocabularies),
every TP size the component offers and more, with every PP size, it gives the same
refusal (vLLM's message), the same ranks (layers, heads, KV heads, vocabulary rows,
parameters), the same KV blocks and tokens per GPU, the same pipeline split with and without
a partition, the same vocabulary rows per rank, and the same errors."""

import json
import random

from hf_config import read_presets
from tp_memory import kv_head_replicas, kv_tokens, layout, pp_indices, refusal, vocab_rows

from coursekit.components import run_twins

DRIVER = r"""
const fs = require("fs"), vm = require("vm");
for (const file of JSON.parse(process.argv[1])) {
  vm.runInThisContext(fs.readFileSync(file, "utf-8"), { filename: file });
}
const T = courseModules.tp_memory;
const attempt = (run) => {
  try { return run(); } catch (e) { if (e.name !== "ValueError") throw e; return { error: e.message }; }
};
const answers = JSON.parse(fs.readFileSync(0, "utf-8")).map((c) => {
  if (c.kind === "layout") {
    return attempt(() => {
      const ranks = T.layout(c.config, c.tp, c.pp);
      return ranks.map((r) => ({ pp_rank: r.pp_rank, tp_rank: r.tp_rank, layers: r.layers, heads: r.heads,
        kv_heads: r.kv_heads, vocab_rows: r.vocab_rows, parameters: r.parameters, weight_bytes: r.weight_bytes,
        kv: c.kv_memory.map((bytes) => attempt(() => T.kv_tokens(c.config, r, bytes, c.max_model_len))) }));
    });
  }
  if (c.kind === "refusal") return attempt(() => T.refusal(c.config, c.tp));
  if (c.kind === "replicas") return T.kv_head_replicas(c.kv, c.tp);
  if (c.kind === "pp") {
    return attempt(() => [...Array(c.pp).keys()].map((s) => T.pp_indices(c.layers, s, c.pp, c.partition)));
  }
  return attempt(() => [...Array(c.tp).keys()].map((r) => T.vocab_rows(c.vocab, c.tp, r)));
});
process.stdout.write(JSON.stringify(answers));
"""

REAL = ["Qwen2.5-7B-Instruct", "Qwen2.5-32B-Instruct", "Qwen2.5-72B-Instruct",
        "Qwen2.5-1.5B-Instruct", "Qwen3-8B", "Llama-3.1-8B-Instruct"]
TPS = [1, 2, 3, 4, 5, 6, 7, 8, 16, 0, -1, 2.5]


def node(cases: list[dict]) -> list:
    return run_twins(["tp_memory"], DRIVER, cases)


def random_config(rng: random.Random) -> dict:
    kv = rng.choice([1, 2, 3, 4, 5, 6, 8, 16])
    heads = kv * rng.choice([1, 2, 3, 4, 5, 7, 8])
    head_dim = rng.choice([64, 128])
    return {"architectures": [rng.choice(["Qwen2ForCausalLM", "Qwen3ForCausalLM",
                                          "LlamaForCausalLM"])],
            "num_hidden_layers": rng.randint(1, 90), "num_attention_heads": heads,
            "num_key_value_heads": kv, "hidden_size": heads * head_dim,
            "intermediate_size": 32 * rng.randint(1, 900), "vocab_size": rng.randint(1000, 200_000),
            "tie_word_embeddings": rng.random() < .3, "attention_bias": rng.random() < .1}


def attempt(run):
    try:
        return run()
    except ValueError as error:
        return {"error": str(error)}


def python(case: dict):
    """What tp_memory.py answers to one case, as JSON has it."""
    kind = case["kind"]
    if kind == "layout":
        def ranks():
            return [{"pp_rank": r.pp_rank, "tp_rank": r.tp_rank, "layers": list(r.layers),
                     "heads": r.heads, "kv_heads": r.kv_heads, "vocab_rows": r.vocab_rows,
                     "parameters": r.parameters, "weight_bytes": r.weight_bytes,
                     "kv": [attempt(lambda b=b, r=r: vars(kv_tokens(case["config"], r, b,
                                                                     case["max_model_len"])))
                            for b in case["kv_memory"]]}
                    for r in layout(case["config"], case["tp"], case["pp"])]
        return attempt(ranks)
    if kind == "refusal":
        return attempt(lambda: refusal(case["config"], case["tp"]))
    if kind == "replicas":
        return kv_head_replicas(case["kv"], case["tp"])
    if kind == "pp":
        return attempt(lambda: [list(pp_indices(case["layers"], s, case["pp"], case["partition"]))
                                for s in range(case["pp"])])
    return attempt(lambda: [list(vocab_rows(case["vocab"], case["tp"], r))
                            for r in range(case["tp"])])


def cases() -> list[dict]:
    rng = random.Random(38)
    configs = [read_presets()[name].config for name in REAL]
    configs += [random_config(rng) for _ in range(60)]
    found = []
    for config in configs:
        found += [{"kind": "refusal", "config": config, "tp": tp} for tp in TPS]
        for _ in range(6):
            found.append({"kind": "layout", "config": config, "tp": rng.choice(TPS[:9]),
                          "pp": rng.choice([1, 2, 3, 4, 8, rng.randint(0, 100)]),
                          "max_model_len": rng.choice([1, 1024, 8192, rng.randint(1, 40_000)]),
                          "kv_memory": [rng.randint(0, 24 * 2**30), rng.randint(0, 2**20),
                                        -rng.randint(1, 2**30)]})
    found += [{"kind": "replicas", "kv": kv, "tp": tp} for kv in (1, 2, 4, 8) for tp in TPS[:9]]
    pp = [[28, 3, None], [80, 3, None], [28, 2, "10,18"], [28, 2, "10,17"], [28, 3, "10,18"],
          [28, 2, "a,b"], [28, 2, " 10, 18"], [28, 2, "+10,18"], [28, 2, "10,"]]
    pp += [[rng.randint(1, 120), rng.randint(1, 16), None] for _ in range(100)]
    found += [{"kind": "pp", "layers": a, "pp": b, "partition": c} for a, b, c in pp]
    found += [{"kind": "vocab", "vocab": rng.randint(1, 300_000),
               "tp": rng.choice([1, 2, 3, 4, 6, 8, 16])} for _ in range(100)]
    return found


def test_the_twin_splits_every_config_as_the_python():
    given = cases()
    expected = [json.loads(json.dumps(python(case))) for case in given]
    found = node(given)
    problems = [(case, ours, theirs) for case, ours, theirs in zip(given, expected, found)
                if ours != theirs]
    assert problems[:3] == [], f"{len(problems)} cases differ"
    # The cases reach every branch: refusals of each kind, layouts built, copied KV heads,
    # KV memory too small for a block, pipeline and vocabulary errors.
    texts = [str(answer) for answer in expected]
    assert sum("ValueError: Total number" in t for t in texts) >= 50
    assert sum("AssertionError at model build" in t for t in texts) >= 20
    assert sum(isinstance(a, list) and a and "kv" in a[0] for a in expected) >= 100
    assert sum("'num_blocks': 0" in t for t in texts) >= 10
    assert sum("pipeline size must be" in t for t in texts) >= 5
    assert sum("partition" in t for t in texts) >= 3
    assert sum("is not divisible by" in t for t in texts) >= 10
