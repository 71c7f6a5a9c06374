"""One llama.cpp `llama-server` process for the benchmark scripts (bench/llama_server.py,
bench/embed_server.py): started with its libraries beside the binary, waited on until
/health answers, posted JSON to, and stopped. Standard library only."""
import json, os, signal, subprocess, time, urllib.request


def post(url, body, timeout=120):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def healthy(url):
    try:
        with urllib.request.urlopen(url + '/health', timeout=2) as r:
            return r.status == 200
    except Exception:
        return False


class LlamaServer:
    """`binary -m model FLAGS --host 127.0.0.1 --port PORT`, its output to `log`."""

    def __init__(self, binary, model, port, flags, log):
        self.url = f'http://127.0.0.1:{port}'
        cmd = [binary, '-m', model] + flags + ['--host', '127.0.0.1', '--port', str(port)]
        env = dict(os.environ)
        env['LD_LIBRARY_PATH'] = ':'.join(p for p in [os.path.dirname(binary), env.get('LD_LIBRARY_PATH', '')] if p)
        log.write(f'$ {" ".join(cmd)}\n')
        log.flush()
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)

    def wait_ready(self, limit_s):
        """Seconds until /health answered; raises if the server exits or takes longer."""
        t = time.time()
        while time.time() - t < limit_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f'llama-server exited with {self.proc.returncode} (see server.log)')
            if healthy(self.url):
                return time.time() - t
            time.sleep(0.25)
        raise RuntimeError(f'llama-server not ready after {limit_s} s')

    def post(self, path, body, timeout=120):
        return post(self.url + path, body, timeout)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
