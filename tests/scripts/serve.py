#!/usr/bin/env python3
"""A static file server for the browser tests and the test page.

    python3 tests/scripts/serve.py [--port 8631] [--root .] [--cache-control no-store] [--isolate]

Serves ROOT (the repository: models under .cache/, the package under www/ and pkg/,
the test page under examples/) on 127.0.0.1 with `Access-Control-Allow-Origin: *`,
because wasm-bindgen-test-runner serves its page from another port. It answers as a
CDN serving large files does:

  - `Range: bytes=A-B` (one range) with 206 and `Content-Range`, 416 past the end;
    `If-Range` (an ETag or a date) honoured: a stale validator gets the whole file (200);
  - a strong `ETag` (size and mtime) and `Last-Modified`; `If-None-Match` gets 304;
  - `Cache-Control: no-store` on every response by default (as a CDN's signed URLs
    effectively are: the browser's HTTP cache keeps nothing), `--cache-control` to change;
  - HEAD as GET without the body; the validators and `Content-Range` are exposed to
    cross-origin pages (`Access-Control-Expose-Headers`).

`--isolate` adds the headers that make its pages cross-origin isolated
(`Cross-Origin-Opener-Policy: same-origin`, `Cross-Origin-Embedder-Policy: require-corp`),
as a site must send them for the package's threaded CPU build (www/threads.js); every
response also allows itself into such pages (`Cross-Origin-Resource-Policy: cross-origin`).

Query options make the failure cases the tests need without extra files:

  ?truncate=N   send only the first N bytes (Content-Length N): a file cut short
  ?delay_ms=M   sleep M ms before each 64 KiB chunk: a slow download to abort
  ?nolength=1   omit Content-Length (progress total comes from the GGUF header)
  ?length=N     a file of N bytes: the file, then zeros up to N (a model too large for
                the browser, without a file that large on disk; clients stop early)

Tests see and steer the server through endpoints that are not logged themselves:

  GET    /__log?since=I   the requests since index I: {"next": J, "entries": [{i, method,
                          path, query, range, if_range, if_none_match, status, sent, cut,
                          done}]}; `sent` counts body bytes written for that request
  POST   /__control       a JSON rule (or a list of them) for the next matching requests:
                          {"match": "substring of path?query", "times": 1 (0: until
                          cleared), "methods": ["GET"], and one or more of
                          "cut_at": N       reset the connection when the body reaches
                                            byte N of the file (a download cut part-way),
                          "cut_after": N    ... after N body bytes of this response,
                          "status": 503     answer this status with no file,
                          "ignore_range": true   answer 200 with the whole file,
                          "etag": "\\"x\\""  serve this ETag (the file "changed"),
                          "delay_ms": M     as the query option}
  DELETE /__control       forget every rule

A Hugging Face hub stand-in: `/hf/OWNER/REPO/resolve/REV/FILE` redirects (302) to the
file under one of the --hub-dir folders with a fresh signature in the query, as the hub
redirects to a signed CDN URL that differs on every request.

Files are read through symlinks (.cache/models links to ~/.cache/kindling/models).
"""

import argparse
import email.utils
import json
import os
import secrets
import socket
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, urlsplit

CHUNK = 64 * 1024
LOCK = threading.Lock()
LOG = []  # one dict per request, in arrival order
RULES = []  # control rules, first match wins
CACHE_CONTROL = "no-store"
HUB_DIRS = [".cache/models", ".cache/synthetic"]
ISOLATE = False


def take_rule(target, method):
    """The first rule matching `target` (path?query) and `method`, counted as used."""
    with LOCK:
        for rule in RULES:
            if rule["match"] in target and method in rule.get("methods", ["GET"]):
                if rule.get("times", 1) > 0:
                    rule["times"] = rule.get("times", 1) - 1
                    if rule["times"] == 0:
                        RULES.remove(rule)
                return dict(rule)
    return None


def parse_range(header, size):
    """(start, end inclusive) of a single byte range; None to ignore it; 'bad' if unsatisfiable."""
    if not header or not header.startswith("bytes="):
        return None
    spec = header[len("bytes="):].strip()
    if "," in spec:
        return None  # several ranges: answering 200 with the whole file is allowed
    first, _, last = spec.partition("-")
    try:
        if first == "":
            n = int(last)
            if n <= 0:
                return "bad"
            return (max(0, size - n), size - 1) if size else "bad"
        start = int(first)
        end = min(int(last), size - 1) if last else size - 1
    except ValueError:
        return None
    if start >= size or start > end:
        return "bad"
    return (start, end)


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
        self.send_header(
            "Access-Control-Expose-Headers",
            "ETag, Last-Modified, Content-Range, Accept-Ranges, Content-Length, X-Repo-Commit",
        )
        self.send_header("Cache-Control", CACHE_CONTROL)
        self.send_header("Cross-Origin-Resource-Policy", "cross-origin")
        if ISOLATE:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def log_message(self, fmt, *args):  # quiet unless asked
        if os.environ.get("SERVE_VERBOSE"):
            super().log_message(fmt, *args)

    def do_OPTIONS(self):
        self.send_response(204)
        self.send_header("Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "*")
        self.send_header("Access-Control-Max-Age", "600")
        self.end_headers()

    # --- control endpoints ------------------------------------------------------------

    def reply_json(self, status, value):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        if urlsplit(self.path).path != "/__control":
            return self.reply_json(404, {"error": "POST is only for /__control"})
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
            rules = body if isinstance(body, list) else [body]
            for rule in rules:
                if not isinstance(rule, dict) or not isinstance(rule.get("match"), str):
                    raise ValueError("a rule needs a string 'match'")
        except ValueError as e:
            return self.reply_json(400, {"error": str(e)})
        with LOCK:
            RULES.extend(rules)
            current = list(RULES)
        self.reply_json(200, {"rules": current})

    def do_DELETE(self):
        if urlsplit(self.path).path != "/__control":
            return self.reply_json(404, {"error": "DELETE is only for /__control"})
        with LOCK:
            RULES.clear()
        self.reply_json(200, {"rules": []})

    # --- files --------------------------------------------------------------------------

    def do_HEAD(self):
        self.serve(head=True)

    def do_GET(self):
        self.serve(head=False)

    def serve(self, head):
        url = urlsplit(self.path)
        if url.path == "/__log":
            since = int(parse_qs(url.query).get("since", ["0"])[-1])
            with LOCK:
                entries = [dict(e) for e in LOG[since:]]
                nxt = len(LOG)
            return self.reply_json(200, {"next": nxt, "entries": entries})
        method = "HEAD" if head else "GET"
        record = {
            "method": method,
            "path": url.path,
            "query": url.query,
            "range": self.headers.get("Range"),
            "if_range": self.headers.get("If-Range"),
            "if_none_match": self.headers.get("If-None-Match"),
            "status": None,
            "sent": 0,
            "cut": False,
            "done": False,
        }
        with LOCK:
            record["i"] = len(LOG)
            LOG.append(record)
        try:
            self.serve_file(url, head, record)
        finally:
            record["done"] = True

    def send_response(self, code, message=None):
        record = getattr(self, "_record", None)
        if record is not None and record["status"] is None:
            record["status"] = code
        super().send_response(code, message)

    def serve_file(self, url, head, record):
        self._record = record
        target = url.path + ("?" + url.query if url.query else "")
        rule = take_rule(target, record["method"]) or {}
        if rule.get("status"):
            return self.reply_json(int(rule["status"]), {"error": "the control rule said so"})
        if url.path.startswith("/hf/"):
            return self.hub_redirect(url)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        path = self.translate_path(url.path)
        if os.path.isdir(path) or not os.path.isfile(path):
            # directory listings and 404s as usual
            return super().do_HEAD() if head else super().do_GET()
        st = os.stat(path)
        size = st.st_size
        length = min(size, int(query.get("truncate", size)))
        padded = max(length, int(query.get("length", length)))
        delay = float(rule.get("delay_ms", query.get("delay_ms", 0))) / 1000.0
        etag = rule.get("etag") or f'"{padded:x}-{st.st_mtime_ns:x}"'
        last_modified = email.utils.formatdate(st.st_mtime, usegmt=True)

        inm = self.headers.get("If-None-Match")
        if inm and (inm.strip() == "*" or etag in [t.strip() for t in inm.split(",")]):
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return

        byte_range = None if rule.get("ignore_range") else parse_range(self.headers.get("Range"), padded)
        if_range = self.headers.get("If-Range")
        if byte_range is not None and if_range and if_range.strip() not in (etag, last_modified):
            byte_range = None  # the client's copy is of another version: the whole file
        if byte_range == "bad":
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{padded}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        start, end = byte_range if byte_range else (0, padded - 1)
        count = end - start + 1
        self.send_response(206 if byte_range else 200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", last_modified)
        if byte_range:
            self.send_header("Content-Range", f"bytes {start}-{end}/{padded}")
        if not query.get("nolength"):
            self.send_header("Content-Length", str(count))
        self.end_headers()
        if head:
            return
        # Where the connection is cut: an absolute file offset, or a count of this body's bytes.
        stop = start + count
        if "cut_at" in rule:
            stop = min(stop, max(start, int(rule["cut_at"])))
        if "cut_after" in rule:
            stop = min(stop, start + int(rule["cut_after"]))
        try:
            at = start
            with open(path, "rb") as f:
                f.seek(min(at, length))
                while at < stop:
                    if delay:
                        time.sleep(delay)
                    n = min(CHUNK, stop - at)
                    data = f.read(min(n, max(0, length - at))) if at < length else b""
                    data += bytes(n - len(data))  # zeros past `length` (?length=N padding)
                    self.wfile.write(data)
                    at += n
                    record["sent"] += n
            if stop < start + count:
                record["cut"] = True
                # The bytes written so far arrive, then the connection ends short of its
                # Content-Length: the client sees a network error part-way through.
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_WR)
                self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client aborted: that is what some tests do
        if query.get("nolength"):
            self.close_connection = True

    def hub_redirect(self, url):
        # /hf/OWNER/REPO/resolve/REV/FILE -> /<hub dir>/FILE?X-Amz-Signature=<random>
        parts = url.path.split("/")
        if len(parts) < 7 or parts[4] != "resolve":
            return self.reply_json(404, {"error": "expected /hf/OWNER/REPO/resolve/REV/FILE"})
        rev, file = parts[5], "/".join(parts[6:])
        for folder in HUB_DIRS:
            if os.path.isfile(os.path.join(folder, file)):
                self.send_response(302)
                self.send_header("Location", f"/{quote(folder)}/{quote(file)}?X-Amz-Signature={secrets.token_hex(8)}")
                self.send_header("X-Repo-Commit", rev if len(rev) == 40 else "0" * 40)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        self.reply_json(404, {"error": f"no file {file} in the hub folders {HUB_DIRS}"})


def main():
    global CACHE_CONTROL, HUB_DIRS, ISOLATE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8631)
    ap.add_argument("--root", default=".")
    ap.add_argument("--cache-control", default="no-store", help="the Cache-Control of every response")
    ap.add_argument("--isolate", action="store_true", help="send COOP/COEP: pages are cross-origin isolated")
    ap.add_argument("--hub-dir", action="append", help="folders /hf/... resolves to (default .cache/models, .cache/synthetic)")
    args = ap.parse_args()
    os.chdir(args.root)
    CACHE_CONTROL = args.cache_control
    ISOLATE = args.isolate
    HUB_DIRS = args.hub_dir or HUB_DIRS
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
