"""A real ttstore server for the tests: `node dist/src/main.js` on a free port and a temporary data
directory (build the repository first: npm run build). TTSTORE_TEST_URL and TTSTORE_TEST_SERVICE_KEY
point the tests at a running server instead."""

import json
import os
import pathlib
import secrets
import subprocess
import tempfile
import time

import pytest

import ttstore

REPO = pathlib.Path(__file__).resolve().parents[3]
SERVICE_KEY = "svc_python_test_key_0123456789abcdef"


@pytest.fixture(scope="session")
def server():
    if os.environ.get("TTSTORE_TEST_URL"):
        yield {"url": os.environ["TTSTORE_TEST_URL"], "service_key": os.environ["TTSTORE_TEST_SERVICE_KEY"]}
        return
    with tempfile.TemporaryDirectory(prefix="ttstore-py-") as data:
        env = {
            **os.environ,
            "SVC_GATE_HOST": "127.0.0.1",
            "SVC_GATE_PORT": "0",
            "SVC_GATE_DATA_DIR": data,
            "SVC_GATE_ENGINE_SERVICE_KEY": SERVICE_KEY,
            "SVC_GATE_LOG_LEVEL": "info",
            "SVC_GATE_TENANT_INFLIGHT": "1024",
        }
        proc = subprocess.Popen(["node", str(REPO / "dist" / "src" / "main.js")], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("msg") == "listening":
                port = rec["port"]
        if port is None:
            proc.kill()
            raise RuntimeError("the server did not start")
        # Keep draining its log so that it never blocks on a full pipe.
        import threading

        threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
        try:
            yield {"url": f"http://127.0.0.1:{port}", "service_key": SERVICE_KEY}
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.fixture(scope="session")
def operator(server):
    return ttstore.Client(server["url"], service_key=server["service_key"])


@pytest.fixture(scope="session")
def client(server, operator):
    t = operator.create_tenant(f"py-{secrets.token_hex(4)}", plan="enterprise", rate_limit={"requests": 100000, "window_s": 60}, monthly_quota=1e9)
    return ttstore.Client(server["url"], api_key=t["api_key"])
