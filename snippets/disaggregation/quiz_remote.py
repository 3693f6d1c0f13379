"""Self-test: prompt tokens a decode instance computes itself, per connector, when the
prefill instance computed the prompt (with ExampleConnector, the saved KV must also be
found under the name the decode side looks it up by)."""

from remote_kv import consumer_steps, example_connector_keys, external_tokens


def computes(connector: str, prompt: int) -> int:
    """The tokens of the first step that runs any, for a KV received at once."""
    steps = consumer_steps(connector, prompt, 1, done_step=0)
    return next(s["scheduled"] for s in steps if s["scheduled"])


for prompt in (1000, 1001, 33):
    nixl = computes("NixlConnector", prompt)
    print(f"{prompt}-token prompt: NixlConnector computes {nixl}")
    saved, looked_up = example_connector_keys(prompt)
    if saved == looked_up:
        loaded, _ = external_tokens("ExampleConnector", prompt, 0)
        mine = computes("ExampleConnector", prompt)
    else:  # saved under one name, looked up under another: nothing is found
        loaded, mine = 0, prompt
    print(f"  ExampleConnector saves the first {saved} tokens' KV, looks up the first"
          f" {looked_up}: loads {loaded}, computes {mine}")  # fmt: skip
