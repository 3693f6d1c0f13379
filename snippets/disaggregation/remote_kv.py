"""What vLLM 0.26.0's scheduler does with a request whose KV cache another instance
computed: the rules of a KV connector's scheduler half, one request at a time.

Decode side (kv_role "kv_consumer"): the scheduler first looks up its own prefix cache,
then asks the connector how many more prompt tokens it can load
(vllm/v1/core/sched/scheduler.py: Scheduler.schedule calls
KVConnectorBase_V1.get_num_new_matched_tokens). NixlConnector answers "the rest of the
prompt, asynchronously": the request gets blocks for its whole prompt, schedules nothing
and waits as WAITING_FOR_REMOTE_KVS until the worker reports the KV received; then the
scheduler caches those blocks, and since the whole prompt is there it takes one token
back to compute, for the logits of the first output token
(Scheduler._update_waiting_for_remote_kv). ExampleConnector, which reads KV saved as
files, answers at once (synchronously) and only up to a block boundary below the
prompt's last token (example_connector.py: align_to_block_size).

Prefill side (kv_role "kv_producer"): the proxy sends the prompt with max_tokens=1; when
the request finishes, NixlConnector keeps its blocks until the decode side has read them
and returns the kv_transfer_params the proxy forwards
(pull_scheduler.py: NixlPullConnectorScheduler.request_finished).

Here each request runs alone, with a budget and blocks to spare, in vLLM's sync engine
loop (EngineCore.step); lesson 3's scheduler (scheduler.py) is what shares a budget.
"""

from block_pool import BLOCK_SIZE, blocks_for

ROLES = ("kv_producer", "kv_consumer", "kv_both")  # vllm/config/kv_transfer.py: KVRole
CONNECTORS = ("NixlConnector", "ExampleConnector")


def check_kv_transfer_config(kv_connector: str | None, kv_role: str | None) -> dict:
    """vllm/config/kv_transfer.py: KVTransferConfig.__post_init__ and its properties:
    a role must be one of ROLES, and a connector needs a role."""
    if kv_role is not None and kv_role not in ROLES:
        raise ValueError(f"Unsupported kv_role: {kv_role}. Supported roles are {ROLES}")
    if kv_connector is not None and kv_role is None:
        raise ValueError(
            "Please specify kv_role when kv_connector is set,"
            f" supported roles are {ROLES}"
        )
    transfer = kv_connector is not None and kv_role is not None
    return {
        "producer": transfer and kv_role in ("kv_producer", "kv_both"),
        "consumer": transfer and kv_role in ("kv_consumer", "kv_both"),
        "transfer": transfer,
    }


def align_to_block_size(num_tokens: int, block_size: int = BLOCK_SIZE) -> int:
    """example_connector.py: align_to_block_size, (n - 1) // block_size * block_size:
    a multiple of the block size strictly below n (for n >= 1)."""
    return (num_tokens - 1) // block_size * block_size


def example_connector_keys(
    prompt_tokens: int, block_size: int = BLOCK_SIZE
) -> tuple[int, int]:
    """The prompt tokens ExampleConnector saves a prompt's KV under
    (example_connector.py: ReqMeta.make_meta, align_to_block_size(len)) and looks it
    up under (ExampleConnector._found_match_for_prompt, align_to_block_size(len - 1)).
    They differ when the prompt is one token past a whole block: such a prompt's saved
    KV is never found again."""
    if type(prompt_tokens) is not int or prompt_tokens < 2:
        raise ValueError(f"prompt_tokens must be at least 2, got {prompt_tokens!r}")
    return (
        align_to_block_size(prompt_tokens, block_size),
        align_to_block_size(prompt_tokens - 1, block_size),
    )


def external_tokens(
    connector: str, prompt_tokens: int, local_hit: int, block_size: int = BLOCK_SIZE
) -> tuple[int, bool]:
    """get_num_new_matched_tokens of a decode-side request: the prompt tokens the
    connector loads beyond the local prefix-cache hit, and whether asynchronously."""
    if connector not in CONNECTORS:
        raise ValueError(f"connector must be one of {CONNECTORS}, got {connector!r}")
    if type(prompt_tokens) is not int or prompt_tokens < 2:
        raise ValueError(f"prompt_tokens must be at least 2, got {prompt_tokens!r}")
    if not 0 <= local_hit < prompt_tokens:
        raise ValueError(
            f"local_hit must be from 0 to {prompt_tokens - 1}, got {local_hit!r}"
        )
    if connector == "NixlConnector":
        # NixlPullConnectorScheduler.get_num_new_matched_tokens: do_remote_prefill
        count = prompt_tokens - local_hit
        return (count, True) if count > 0 else (0, False)
    # ExampleConnector.get_num_new_matched_tokens: the saved prompt, minus its last
    # token, aligned down; loaded in the same step (False).
    return align_to_block_size(prompt_tokens - 1, block_size) - local_hit, False


def consumer_steps(
    connector: str,
    prompt_tokens: int,
    max_tokens: int,
    local_hit: int = 0,
    arrival: int = 0,
    done_step: int | None = None,
    block_size: int = BLOCK_SIZE,
) -> list[dict]:
    """One decode-side request, step by step from step 0 until it finishes: the tokens
    scheduled, its status and num_computed_tokens after the step, and the blocks it
    holds. done_step: the step whose output reports its KV received (NixlConnector)."""
    external, load_async = external_tokens(
        connector, prompt_tokens, local_hit, block_size
    )
    if load_async and (done_step is None or done_step < arrival):
        raise ValueError(f"an asynchronous load needs a done_step from {arrival} on")
    steps: list[dict] = [
        {"scheduled": 0, "status": None, "computed": 0, "blocks": 0}
    ] * arrival
    computed = local_hit + external  # request.num_computed_tokens, set on admission
    output = 0
    now = arrival
    if load_async:
        # Blocks for the whole prompt, nothing scheduled (num_new_tokens = 0).
        while now <= done_step:
            steps.append(
                {"scheduled": 0, "status": "WAITING_FOR_REMOTE_KVS",
                 "computed": computed, "blocks": blocks_for(computed, block_size)}
            )  # fmt: skip
            now += 1
        if computed == prompt_tokens:  # a full prompt: recompute the last token
            computed = prompt_tokens - 1
    while output < max_tokens:
        new = prompt_tokens + output - computed  # the rest of the prompt, or 1
        computed += new
        output += 1  # every step reaches the end of the known tokens: it samples
        done = output == max_tokens
        steps.append(
            {"scheduled": new, "status": None if done else "RUNNING",
             "computed": None if done else computed,
             "blocks": 0 if done else blocks_for(computed, block_size)}
        )  # fmt: skip
    return steps


def producer_steps(
    prompt_tokens: int,
    done_step: int,
    budget: int,
    arrival: int = 0,
    block_size: int = BLOCK_SIZE,
) -> tuple[list[dict], dict]:
    """One prefill-side request (max_tokens=1) with NixlConnector: its prompt in chunks
    of the budget; finished, it keeps its blocks (FINISHED_LENGTH_CAPPED) until the
    output of done_step reports them sent. Returns the steps and the kv_transfer_params
    it hands the proxy (what the test compares of them)."""
    steps = [{"scheduled": 0, "status": None, "computed": 0, "blocks": 0}] * arrival
    computed = 0
    while computed < prompt_tokens:
        new = min(budget, prompt_tokens - computed)
        computed += new
        status = "FINISHED_LENGTH_CAPPED" if computed == prompt_tokens else "RUNNING"
        steps.append(
            {"scheduled": new, "status": status, "computed": computed,
             "blocks": blocks_for(computed, block_size)}
        )  # fmt: skip
    if done_step < len(steps) - 1:
        raise ValueError(f"done_step must be from {len(steps) - 1} on, got {done_step}")
    while len(steps) <= done_step:  # held for the decode side to read
        steps.append({**steps[-1], "scheduled": 0})
    steps[-1] = {**steps[-1], "status": None, "computed": None, "blocks": 0}
    params = {
        "do_remote_prefill": True,  # for the decode side, which reads these blocks
        "do_remote_decode": False,
        "blocks": blocks_for(prompt_tokens, block_size),
        "remote_num_tokens": prompt_tokens,  # request.num_computed_tokens
    }
    return steps, params


if __name__ == "__main__":
    print(check_kv_transfer_config("NixlConnector", "kv_consumer"))
    for connector in CONNECTORS:
        print(f"{connector}, a 40-token prompt, 16 of them cached on the decode side:")
        steps = consumer_steps(connector, 40, 3, local_hit=16, done_step=1)
        for i, s in enumerate(steps):
            print(
                f"  step {i}: {s['scheduled']:>2} tokens  {s['status'] or 'finished'}"
            )
    steps, params = producer_steps(40, done_step=3, budget=32)
    print("prefill side, budget 32:", [s["scheduled"] for s in steps], params)
