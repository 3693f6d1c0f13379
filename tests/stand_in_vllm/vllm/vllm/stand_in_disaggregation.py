"""Lesson 12 in the stand-in: --kv-transfer-config with ExampleConnector, the connector that
saves a prompt's KV to a shared folder and loads it in another instance, with vLLM 0.26.0's
rules (vllm/distributed/kv_transfer/kv_connector/v1/example_connector.py), in the stand-in's
own terms (a marker file per saved prompt, no tensors):

- config: KVTransferConfig.__post_init__ (vllm/config/kv_transfer.py) refuses a connector
  without a role and an unknown role; the stand-in models ExampleConnector only;
- lookup: a new request whose prompt, minus its last token aligned down to a block
  (align_to_block_size), was saved loads those tokens at once (get_num_new_matched_tokens
  answers synchronously), beyond the local prefix-cache hit; the connector counts the
  prompt tokens past the local hit as queried and the loaded ones as hits
  (Scheduler.schedule: connector_prefix_cache_stats, vllm:external_prefix_cache_*);
- save: a new request whose prompt was not found gets it saved (build_connector_meta,
  is_store), whatever the role, under its prompt aligned down (ReqMeta.make_meta): a
  prompt of 16k + 1 tokens is saved under one name and looked up under another, and is
  never found, as in vLLM.
Not modelled: the tensors, the files' size and time, a prompt saved while it runs in chunks.
"""

from __future__ import annotations

import hashlib
import json
import os

from vllm import stand_in

ROLES = ("kv_producer", "kv_consumer", "kv_both")  # vllm/config/kv_transfer.py: KVRole


class ExampleConnector:
    def __init__(self, storage: str, block_size: int):
        self.storage, self.block_size = storage, block_size
        self.queries = self.hits = 0  # this step's, in tokens

    def _folder(self, tokens: list[int]) -> str:
        digest = hashlib.sha256(json.dumps(tokens).encode()).hexdigest()
        return os.path.join(self.storage, f"stand-in-{digest}")

    def _align(self, num_tokens: int) -> int:  # align_to_block_size
        return (num_tokens - 1) // self.block_size * self.block_size

    def admit(self, request, gpu_tokens: int, log_stats: bool) -> int:
        prompt = request.prompt_token_ids
        # Looked up under the prompt minus its last token, aligned (_found_match_for_prompt)
        looked_up = self._align(len(prompt) - 1)
        found = os.path.isdir(self._folder(prompt[:looked_up]))
        loaded = looked_up - gpu_tokens if found else 0
        if not found:  # is_store: saved under the whole prompt, aligned (ReqMeta.make_meta)
            os.makedirs(self._folder(prompt[: self._align(len(prompt))]), exist_ok=True)
        if log_stats and not request.num_preemptions and request.num_tokens - gpu_tokens:
            self.queries += request.num_tokens - gpu_tokens
            self.hits += loaded
        return gpu_tokens + loaded

    def take_stats(self) -> tuple[int, int]:
        counts, self.queries, self.hits = (self.queries, self.hits), 0, 0
        return counts


def connector(engine) -> ExampleConnector | None:
    """The connector of an engine started with --kv-transfer-config, or None."""
    text = engine.options.get("kv_transfer_config")
    if text is None:
        return None
    config = json.loads(text) if isinstance(text, str) else dict(text)
    name, role = config.get("kv_connector"), config.get("kv_role")
    if role is not None and role not in ROLES:
        raise ValueError(f"Unsupported kv_role: {role}. Supported roles are {ROLES}")
    if name is not None and role is None:
        raise ValueError("Please specify kv_role when kv_connector is set, supported roles"
                         f" are {ROLES}")
    if name != "ExampleConnector":
        raise stand_in.StandInError(f"the stand-in models ExampleConnector only, not {name!r}")
    extra = config.get("kv_connector_extra_config", {})
    return ExampleConnector(extra.get("shared_storage_path", "/tmp"), engine.block_size)
