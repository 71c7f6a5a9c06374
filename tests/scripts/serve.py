#!/usr/bin/env python3
"""A static file server for the browser tests and the test page.

    python3 tests/scripts/serve.py [--port 8631] [--root .]

Serves ROOT (the repository: models under .cache/, the package under www/ and pkg/,
the test page under examples/) on 127.0.0.1 with `Access-Control-Allow-Origin: *`,
because wasm-bindgen-test-runner serves its page from another port. Query options
make the failure cases the tests need without extra files:

  ?truncate=N   send only the first N bytes (Content-Length N): a file cut short
  ?delay_ms=M   sleep M ms before each 64 KiB chunk: a slow download to abort
  ?nolength=1   omit Content-Length (progress total comes from the GGUF header)
  ?length=N     a file of N bytes: the file, then zeros up to N (a model too large for
                the browser, without a file that large on disk; clients stop early)

Files are read through symlinks (.cache/models links to ~/.cache/kindling/models).
"""

import argparse
import os
import sys
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CHUNK = 64 * 1024


class Handler(SimpleHTTPRequestHandler):
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".gguf": "application/octet-stream",
        ".json": "application/json",
    }

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, fmt, *args):  # quiet unless asked
        if os.environ.get("SERVE_VERBOSE"):
            super().log_message(fmt, *args)

    def do_OPTIONS(self):
        self.send_response(204)
        self.send_header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "*")
        self.end_headers()

    def do_GET(self):
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        path = self.translate_path(url.path)
        if os.path.isdir(path) or not os.path.isfile(path):
            return super().do_GET()  # directory listings and 404s as usual
        size = os.path.getsize(path)
        length = min(size, int(query.get("truncate", size)))
        padded = max(length, int(query.get("length", length)))
        delay = float(query.get("delay_ms", 0)) / 1000.0
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        if not query.get("nolength"):
            self.send_header("Content-Length", str(padded))
        self.end_headers()
        try:
            with open(path, "rb") as f:
                left = length
                while left > 0:
                    if delay:
                        time.sleep(delay)
                    data = f.read(min(CHUNK, left))
                    if not data:
                        break
                    self.wfile.write(data)
                    left -= len(data)
            zeros = bytes(CHUNK)
            left = padded - length
            while left > 0:
                self.wfile.write(zeros[: min(CHUNK, left)])
                left -= min(CHUNK, left)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client aborted: that is what some tests do
        if query.get("nolength"):
            self.close_connection = True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8631)
    ap.add_argument("--root", default=".")
    args = ap.parse_args()
    os.chdir(args.root)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"serving {os.getcwd()} on http://127.0.0.1:{args.port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
