"""A stand-in for `vllm serve MODEL --flags...`, so that tests can exercise the GPU lab harness
(coursekit.gpu_labs) without a GPU: it prints $STAND_IN_LOG to stderr, then answers GET
/v1/models and POST /v1/completions of the OpenAI API on --host and --port, the completion
echoing the model and the prompt. Other flags are accepted and ignored.

Run: python stand_in_server.py MODEL [--flags...] --host 127.0.0.1 --port 8000
"""

import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def handler(model: str):
    class Handler(BaseHTTPRequestHandler):
        def answer(self, body):
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path != "/v1/models":
                return self.send_error(404)
            self.answer({"data": [{"id": model}]})

        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/completions" or request.get("model") != model:
                return self.send_error(404)
            self.answer({"choices": [{"text": f"{model}: {request['prompt']}"}]})

    return Handler


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    args, _ = parser.parse_known_args(argv)
    print(os.environ.get("STAND_IN_LOG", ""), file=sys.stderr, flush=True)
    HTTPServer((args.host, args.port), handler(args.model)).serve_forever()


if __name__ == "__main__":
    main()
