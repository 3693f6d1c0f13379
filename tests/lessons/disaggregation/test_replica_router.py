"""The replica-router component's workload as the page introduces it: on route_trace.py's
eight requests (its preset, one engine step between requests) it routes each request to
the replica route_trace.py's table names and finds the same cached tokens, policy by
policy, though route_trace.py times its replicas' steps and the component counts them."""

import pytest
from route_trace import prompt_of, trace
from router import POLICIES

from coursekit.components import components

PARITY = components()["replica-router"].parity()


@pytest.mark.parametrize("policy", POLICIES)
def test_the_route_trace_preset_routes_as_route_trace(policy):
    values, fallback = PARITY.effective(PARITY.DATA.state(PARITY.DATA.PRESETS["system"]) | {"policy": policy})
    assert fallback == []
    rows = PARITY.run(values)
    assert [row["prompt"] for row in rows] == [prompt_of(n) for n in range(len(rows))]
    assert [(row["replica"], row["cached"]) for row in rows] == trace(policy, values["replicas"])


def test_a_chats_next_turn_carries_its_answer():
    """On the chats preset each chat's next turn is its previous prompt, the answer as the
    scheduler samples it, and a new question: with cache_aware it goes back to its replica
    and hits past the system prompt."""
    values, _ = PARITY.effective(PARITY.DATA.state(PARITY.DATA.PRESETS["chats"]) | {"policy": "cache_aware"})
    rows = PARITY.run(values)
    first, second = rows[0], rows[4]  # chat 1a, turns 1 and 2
    assert (first["chat"], second["chat"], second["turn"]) == ("1a", "1a", 2)
    question, output = PARITY.DATA.QUESTION["tokens"], PARITY.DATA.OUTPUT
    assert second["tokens"] == first["tokens"] + output + question
    assert second["replica"] == first["replica"]
    assert second["cached"] > len(PARITY.DATA.SYSTEMS["1"])
