"""The lab: four requests to lab_serve.sh's server, each printed as one JSON line.

1. a tool call (tool_choice "auto"): Qwen2.5 writes <tool_call>...</tool_call>, the
   hermes parser turns it into message.tool_calls;
2. a JSON-schema answer (response_format json_schema): the grammar's mask at every step;
3. logprobs of a greedy answer (logprobs_mode raw_logprobs, the default: the logprobs of
   the model's logits, before penalties and temperature);
4. the same 64 greedy prompts sent one at a time, then all at once: how many answers
   differ with the batch.
Every request states its sampling: vllm serve fills what a request leaves out from the
model's generation_config.json (Qwen2.5: temperature 0.7, top_p 0.8, top_k 20,
repetition_penalty 1.05).

Run (in a second terminal): python lab_requests.py [URL] > lab.txt
"""

import json
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor

MODEL = "Qwen/Qwen2.5-7B-Instruct"
GREEDY = {"temperature": 0, "repetition_penalty": 1.0}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}}]  # fmt: skip
SCHEMA = {"type": "object", "properties": {
    "city": {"type": "string"},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    "temperature": {"type": "integer"}},
    "required": ["city", "unit", "temperature"],
    "additionalProperties": False}  # fmt: skip
BATCH = 64
PROMPTS = [f"Write one sentence about the number {n}." for n in range(BATCH)]


def post(url: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        url + path,
        json.dumps({"model": MODEL, **body}).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.load(response)


def chat(url: str, text: str, **body) -> dict:
    messages = [{"role": "user", "content": text}]
    return post(url, "/v1/chat/completions", {"messages": messages, **body})


def complete(url: str, prompt: str) -> str:
    body = {"prompt": prompt, "max_tokens": 48, **GREEDY}
    return post(url, "/v1/completions", body)["choices"][0]["text"]


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    tool = chat(url, "What's the weather in Paris?", tools=TOOLS, tool_choice="auto",
                max_tokens=128, **GREEDY)  # fmt: skip
    print(json.dumps({"part": "tool", "choice": tool["choices"][0]}))
    spec = {"name": "weather", "schema": SCHEMA, "strict": True}
    schema = {"type": "json_schema", "json_schema": spec}
    answer = chat(url, "Describe Paris weather today as JSON.", response_format=schema,
                  max_tokens=128, **GREEDY)  # fmt: skip
    print(json.dumps({"part": "json", "choice": answer["choices"][0]}))
    logprobs = chat(url, "Name a colour.", logprobs=True, top_logprobs=5,
                    max_tokens=8, **GREEDY)  # fmt: skip
    print(json.dumps({"part": "logprobs", "choice": logprobs["choices"][0]}))
    one_by_one = [complete(url, p) for p in PROMPTS]
    with ThreadPoolExecutor(BATCH) as pool:
        together = list(pool.map(lambda p: complete(url, p), PROMPTS))
    print(json.dumps({"part": "batch", "alone": one_by_one, "together": together}))
