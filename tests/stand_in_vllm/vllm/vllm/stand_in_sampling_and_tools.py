"""POST /v1/chat/completions of the stand-in's `vllm serve`, for lesson 10's lab
(snippets/sampling-and-tools/lab_requests.py), in the shape of vLLM 0.26.0's answers
(vllm/entrypoints/openai/chat_completion/serving.py: OpenAIServingChat
.chat_completion_full_generator; ChatCompletionResponse in
vllm/entrypoints/openai/chat_completion/protocol.py).

What it plays, with no model:
- tools with tool_choice "auto": with --enable-auto-tool-choice and --tool-call-parser,
  the call a model would write for the first tool (its required string arguments filled
  with "Paris"), as message.tool_calls with finish_reason "tool_calls"; without them, the
  same <tool_call> text as plain content (serving.py: not enable_auto_tools);
- response_format json_schema (and, on /v1/completions, structured_outputs json): an
  instance of a flat schema (the first enum value,
  "Paris" for a string, 20 for an integer), as the grammar's mask would force;
- logprobs with top_logprobs: each token's logprob and its top list from fixed made-up
  logits (a log_softmax, so they sum to at most 1), the chosen token the top one, as
  greedy decoding with no penalty and logprobs_mode raw_logprobs gives.
"""

import json
import math
import time
import uuid

OPTIONS = {"enable_auto_tool_choice": False, "tool_call_parser": None}
LOGITS = {"Blue": 3.0, "Red": 2.0, "Green": 1.5, "Yellow": 1.0, "Black": 0.5, ".": 0.0}


def configure(enable_auto_tool_choice: bool, tool_call_parser: str | None) -> None:
    """vllm/entrypoints/openai/cli_args.py: the flag needs the parser."""
    if enable_auto_tool_choice and not tool_call_parser:
        raise TypeError("Error: --enable-auto-tool-choice requires --tool-call-parser")
    if tool_call_parser not in (None, "hermes"):
        raise ValueError(f"the stand-in models the hermes parser only, not {tool_call_parser}")
    OPTIONS.update(enable_auto_tool_choice=enable_auto_tool_choice,
                   tool_call_parser=tool_call_parser)


def instance(schema: dict) -> dict:
    values = {"string": "Paris", "integer": 20}
    return {key: rule["enum"][0] if "enum" in rule else values[rule["type"]]
            for key, rule in schema["properties"].items()}


def structured(complete, body: dict) -> dict:
    """POST /v1/completions with structured_outputs {"json": schema} (lab_bench_schema.py):
    the engine runs the request for as many tokens as the answer has (a made-up count, a
    token for every 4 characters; the grammar ends a real answer there), and the answer is
    the schema's instance, finished by "stop"."""
    text = json.dumps(instance(body["structured_outputs"]["json"]))
    answer = complete({**body, "max_tokens": min(body.get("max_tokens", 16), len(text) // 4)})
    answer["choices"][0].update(text=text, finish_reason="stop")
    return answer


def logprobs(count: int, top: int) -> dict:
    total = math.log(sum(math.exp(x) for x in LOGITS.values()))
    ranked = sorted(((t, x - total) for t, x in LOGITS.items()), key=lambda p: -p[1])
    entries = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in ranked]
    return {"content": [{**entries[0], "top_logprobs": entries[:top]} for _ in range(count)]}


def chat(body: dict, model: str) -> tuple[dict, str, int]:
    """The answer (JSON, content type, status) vLLM would give, as stand_in_server's
    Handler.answer takes it."""
    message, finish, choice_logprobs = {"role": "assistant", "content": None}, "stop", None
    tools, fmt = body.get("tools"), body.get("response_format") or {}
    if tools and body.get("tool_choice", "auto") == "auto":
        function = tools[0]["function"]
        arguments = {k: "Paris" for k in function["parameters"].get("required", [])}
        call = {"name": function["name"], "arguments": arguments}
        if OPTIONS["enable_auto_tool_choice"]:
            message["tool_calls"] = [{
                "id": f"chatcmpl-tool-{uuid.uuid4().hex}", "type": "function",
                "function": {"name": call["name"],
                             "arguments": json.dumps(arguments, ensure_ascii=False)}}]
            finish = "tool_calls"
        else:
            message["content"] = f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
    elif fmt.get("type") == "json_schema":
        message["content"] = json.dumps(instance(fmt["json_schema"]["schema"]))
    else:
        message["content"] = "Blue"
    if body.get("logprobs"):
        choice_logprobs = logprobs(1, body.get("top_logprobs") or 0)
    answer = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion",
              "created": int(time.time()), "model": model,
              "choices": [{"index": 0, "message": message, "logprobs": choice_logprobs,
                           "finish_reason": finish, "stop_reason": None}],
              "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}}
    return answer, "application/json", 200
