"""How `vllm serve --enable-auto-tool-choice --tool-call-parser hermes` turns Qwen2.5's
text into OpenAI tool calls: vLLM 0.26.0's vllm/tool_parsers/hermes_tool_parser.py:
Hermes2ProToolParser, rule by rule, on plain strings.

The model writes <tool_call>{"name": ..., "arguments": {...}}</tool_call> (its chat
template told it to). Whole output (extract_tool_calls): no "<tool_call>" means plain
text; otherwise every <tool_call>...</tool_call> (or a last one left open) is
json.loads'd, and the text before the first tag is the content. If any call fails to
load, or lacks "name" or "arguments", the whole output comes back as text: no call.
Streaming (extract_tool_calls_streaming): after each delta the parser re-reads the whole
text so far, sends the text before the first tag (holding back what could be the start
of one), then per call its name once complete, then the arguments as they grow."""

import json
import re

START, END = "<tool_call>", "</tool_call>"
# Hermes2ProToolParser.tool_call_regex: closed calls, or one left open at the end
TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", re.DOTALL)


def parse(output: str) -> dict:
    """Hermes2ProToolParser.extract_tool_calls: {tools_called, calls, content}."""
    if START not in output:
        return {"tools_called": False, "calls": [], "content": output}
    try:
        loaded = [json.loads(a or b) for a, b in TOOL_CALL.findall(output)]
        calls = [
            (c["name"], json.dumps(c["arguments"], ensure_ascii=False)) for c in loaded
        ]
    except (ValueError, KeyError, TypeError):  # vLLM catches every Exception
        return {"tools_called": False, "calls": [], "content": output}
    content = output[: output.find(START)]
    return {"tools_called": True, "calls": calls, "content": content or None}


def partial_tag_overlap(text: str, tag: str) -> int:
    """vllm/tool_parsers/utils.py: partial_tag_overlap: the longest start of tag that
    text ends with (shorter than the whole tag)."""
    for k in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:k]):
            return k
    return 0


def is_complete_json(text: str) -> bool:
    try:
        json.loads(text)
        return True
    except ValueError:
        return False


class StreamParser:
    """Hermes2ProToolParser's streaming state: what it has sent so far."""

    def __init__(self):
        self.sent_content = 0  # _sent_content_idx
        self.names: list[str | None] = []  # prev_tool_call_arr[i]["name"]
        self.sent_args: list[str] = []  # streamed_args_for_tool

    def _content(self, text: str) -> str | None:
        if START not in text:
            sendable = len(text) - partial_tag_overlap(text, START)
        else:
            sendable = text.index(START)
        if sendable > self.sent_content:
            content, self.sent_content = text[self.sent_content : sendable], sendable
            return content
        return None

    @staticmethod
    def _call_jsons(text: str) -> list[tuple[str, bool]]:
        """_extract_tool_call_jsons: (json text, complete?) per <tool_call>."""
        found, pos = [], 0
        while (start := text.find(START, pos)) != -1:
            body = start + len(START)
            end = text.find(END, body)
            if end != -1:
                found.append((text[body:end].strip(), True))
                pos = end + len(END)
                continue
            raw = text[body:]
            overlap = partial_tag_overlap(raw, END)
            raw = (raw[:-overlap] if overlap else raw).strip()
            found.append((raw, is_complete_json(raw) if raw else False))
            break
        return found

    @staticmethod
    def _args(call_json: str, complete: bool) -> str | None:
        """_extract_tool_args: what follows "arguments": (less the outer } once
        complete)."""
        match = re.search(r'"arguments"\s*:\s*', call_json)
        if not match:
            return None
        raw = call_json[match.end() :]
        if complete:
            raw = raw.rstrip()
            if raw.endswith("}"):
                raw = raw[:-1].rstrip()
        return raw

    def feed(self, text: str) -> dict | None:
        """extract_tool_calls_streaming with current_text = text: the delta to send
        ({content, calls: [(index, name or None, arguments piece or None)]}) or None."""
        content, calls = self._content(text), []
        for i, (call_json, complete) in enumerate(self._call_jsons(text)):
            if i >= len(self.names):
                self.names.append(None)
                self.sent_args.append("")
            if self.names[i] is None:
                match = re.search(r'"name"\s*:\s*"([^"]+)"', call_json)
                if not match:
                    break  # call i + 1 waits for call i's name
                self.names[i] = match.group(1)
                calls.append((i, self.names[i], None))
            args = self._args(call_json, complete)
            if args is not None and len(args) > len(self.sent_args[i]):
                piece = args[len(self.sent_args[i]) :]
                self.sent_args[i] = args
                calls.append((i, None, piece))
        return {"content": content, "calls": calls} if content or calls else None


def stream(deltas: list[str]) -> list[dict | None]:
    parser, text, sent = StreamParser(), "", []
    for delta in deltas:
        text += delta
        sent.append(parser.feed(text))
    return sent


OUTPUTS = {
    "one call": 'I will check.\n<tool_call>\n{"name": "get_weather", "arguments":'
    ' {"city": "Paris", "unit": "celsius"}}\n</tool_call>',
    "two calls": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}'
    '\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}'
    "\n</tool_call>",
    "single quotes": "<tool_call>\n{'name': 'get_weather', 'arguments': {}}"
    "\n</tool_call>",
    "no tags": '{"name": "get_weather", "arguments": {"city": "Paris"}}',
}
DELTAS = ["I will", " check.\n<tool", '_call>\n{"name": "get_', 'weather", "argu',
          'ments": {"city": "Par', 'is"}}\n</tool_', "call>"]  # fmt: skip

if __name__ == "__main__":
    for name, output in OUTPUTS.items():
        got = parse(output)
        print(
            f"{name:<14} tools_called={got['tools_called']!s:<5} calls={got['calls']}"
        )
    print("streamed, delta by delta:")
    for delta, sent in zip(DELTAS, stream(DELTAS)):
        print(f"  {delta!r:<26} -> {sent}")
