"""Lesson 12's own checks: the connector rules of remote_kv.py, the transfer arithmetic,
the router's policies, the split model's input checks and the lab's reader."""

import pytest
from disagg_model import GPUS, split
from kv_transfer import LINKS, kv_transfer_bytes, transfer_seconds
from lab_disagg_check import COUNTERS, predict, read
from remote_kv import (
    ROLES,
    align_to_block_size,
    check_kv_transfer_config,
    consumer_steps,
    example_connector_keys,
    external_tokens,
    producer_steps,
)
from router import POLICIES, Replica, choose, simulate


@pytest.mark.parametrize("role", ROLES)
def test_a_connector_with_a_role_is_a_transfer_instance(role):
    made = check_kv_transfer_config("NixlConnector", role)
    assert made["transfer"] and (made["producer"] or made["consumer"])


@pytest.mark.parametrize("connector, role", [("NixlConnector", None), (None, "decode")])
def test_kv_transfer_config_refuses_what_vllm_refuses(connector, role):
    with pytest.raises(ValueError, match="kv_role"):
        check_kv_transfer_config(connector, role)


def test_align_to_block_size_stays_strictly_below():
    for n in range(1, 100):
        aligned = align_to_block_size(n)
        assert aligned % 16 == 0 and aligned < n and n - aligned <= 16


def test_nixl_loads_the_rest_of_the_prompt_asynchronously():
    assert external_tokens("NixlConnector", 40, 16) == (24, True)
    assert external_tokens("ExampleConnector", 40, 16)[1] is False


@pytest.mark.parametrize("args", [("Other", 40, 0), ("NixlConnector", 1, 0), ("NixlConnector", 40, 40)])
def test_external_tokens_refuses_bad_input(args):
    with pytest.raises(ValueError):
        external_tokens(*args)


def test_a_remote_request_waits_then_computes_one_token():
    steps = consumer_steps("NixlConnector", 100, 2, arrival=1, done_step=3)
    assert [s["status"] for s in steps] == [None, *["WAITING_FOR_REMOTE_KVS"] * 3, "RUNNING", None]
    assert [s["scheduled"] for s in steps][4:] == [1, 1]


def test_an_asynchronous_load_needs_its_done_step():
    with pytest.raises(ValueError, match="done_step"):
        consumer_steps("NixlConnector", 100, 2, arrival=2, done_step=1)


def test_the_prefill_side_holds_its_blocks_until_sent():
    steps, params = producer_steps(100, done_step=5, budget=64)
    assert [s["scheduled"] for s in steps] == [64, 36, 0, 0, 0, 0]
    assert steps[-2]["blocks"] == params["blocks"] and steps[-1]["blocks"] == 0
    with pytest.raises(ValueError, match="done_step"):
        producer_steps(100, done_step=0, budget=64)


def test_the_kv_moves_in_whole_blocks():
    assert kv_transfer_bytes(17) == kv_transfer_bytes(32) == 2 * kv_transfer_bytes(1)
    slow, fast = transfer_seconds(1024, LINKS["10 GbE TCP"]), transfer_seconds(1024, 1e12)
    assert slow > fast > 0
    for bad in (0, -1.0, True, "fast"):
        with pytest.raises(ValueError):
            transfer_seconds(1024, bad)
    with pytest.raises(ValueError):
        kv_transfer_bytes(0)


def test_policies_choose_as_described():
    replicas = [Replica(f"R{i}", 64) for i in range(3)]
    prompt = list(range(1000, 1100))
    assert [choose("round_robin", replicas, prompt, n) for n in range(4)] == [0, 1, 2, 0]
    first = choose("prefix_hash", replicas, prompt, 0)
    assert choose("prefix_hash", replicas, prompt + [5, 6], 7) == first
    with pytest.raises(ValueError, match="policy"):
        choose("random", replicas, prompt, 0)


def test_simulate_refuses_no_replicas():
    with pytest.raises(ValueError, match="num_replicas"):
        simulate(POLICIES[0], [], num_replicas=0)


@pytest.mark.parametrize("prefill", [0, GPUS])
def test_a_split_needs_both_sides(prefill):
    with pytest.raises(ValueError, match="prefill"):
        split([0.0], prefill)


def test_the_lab_reader_reads_what_the_sender_prints():
    expected = predict()
    lines = [
        f"{name}: {prompt} prompt, {cached} cached, 12.5 ms" for name, (prompt, cached) in expected["requests"].items()
    ]
    lines += [f'{name}{{engine="0",model_name="m"}} {value}.0' for name, value in expected["counters"].items()]
    found, times = read("\n".join(lines))
    assert found == expected and set(times.values()) == {12.5}
    assert set(found["counters"]) == set(COUNTERS)


def test_example_connector_misses_prompts_one_past_a_block():
    for n in range(2, 100):
        saved, looked_up = example_connector_keys(n)
        assert (saved != looked_up) == ((n - 1) % 16 == 0)
