"""What the lab's answers must satisfy (gpu_checks.py holds them to it): the JSON-schema
answer against the lab's flat schema, and the greedy answer's logprobs against their
top_logprobs."""

import json
import math

from lab_requests import SCHEMA


def lab_json_problems(text: str, schema: dict = SCHEMA) -> list[str]:
    """What is wrong with text as an answer to the lab's flat schema (types, enum,
    required, no other keys)."""
    try:
        value = json.loads(text)
    except ValueError as error:
        return [f"not JSON: {error}"]
    if not isinstance(value, dict):
        return [f"not an object: {value!r}"]
    kinds = {"string": str, "integer": int}
    found = [f"missing {k}" for k in schema["required"] if k not in value]
    for key, item in value.items():
        rule = schema["properties"].get(key)
        if rule is None:
            found.append(f"extra key {key}")
        elif not isinstance(item, kinds[rule["type"]]) or isinstance(item, bool):
            found.append(f"{key} is not of type {rule['type']}: {item!r}")
        elif "enum" in rule and item not in rule["enum"]:
            found.append(f"{key} not in {rule['enum']}: {item!r}")
    return found


def logprob_problems(content: list[dict]) -> list[str]:
    found = []
    for i, position in enumerate(content):
        top = [t["logprob"] for t in position["top_logprobs"]]
        if position["logprob"] < max(top):
            found.append(f"token {i} ({position['token']!r}) is not the top one")
        if sum(math.exp(x) for x in top) > 1 + 1e-6:
            found.append(f"token {i}: top_logprobs sum to more than 1")
    return found


if __name__ == "__main__":
    for answer in (
        '{"city": "Paris", "unit": "celsius", "temperature": 21}',
        '{"city": "Paris", "unit": "kelvin", "temperature": "21"}',
        'Sure! {"city": "Paris"}',
    ):
        print(f"{answer}\n  -> {lab_json_problems(answer) or 'valid'}")
