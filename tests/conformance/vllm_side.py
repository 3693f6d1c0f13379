"""vLLM's side of all the conformance tests, in one process of the conformance venv, so
that a test run imports torch and vLLM once (some 5 CPU seconds each time): it reads one
JSON object with the input of any of the drivers, under "scheduler" (vllm_trace.py),
"spec_decode" (spec_trace.py) and "capture_sizes" (vllm_capture_sizes.py), and prints
one with, under the same keys, {"result": what that driver prints} or {"error": its
traceback}, so that one driver's failure fails only its own tests.
tests/conformance/conftest.py runs it once per test run.

    python vllm_side.py < inputs.json > outputs.json
"""

import json
import sys
import traceback

import spec_trace
import vllm_capture_sizes
import vllm_trace

DRIVERS = {"scheduler": vllm_trace.traces, "spec_decode": spec_trace.traces,
           "capture_sizes": vllm_capture_sizes.sizes}


def main():
    outputs = {}
    for part, given in json.load(sys.stdin).items():
        try:
            outputs[part] = {"result": DRIVERS[part](given)}
        except Exception:
            outputs[part] = {"error": traceback.format_exc()}
    json.dump(outputs, sys.stdout)


if __name__ == "__main__":
    main()
