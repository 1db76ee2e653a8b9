"""The Python client against a real server: every operation, numpy arrays as binary .npy both ways,
problems as typed exceptions, retries on 429 and 503, and pagination over 2,500 keys."""

import base64
import http.server
import json
import secrets
import threading
import time

import numpy as np
import pytest

import ttstore


def test_covers_every_operation_of_the_openapi_document(client):
    doc = client.openapi()
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if not isinstance(op, dict) or "operationId" not in op:
                continue
            oid = op["operationId"]
            assert oid in ttstore.OPERATIONS, f"no client operation for {oid}"
            schemes = {k for r in op.get("security", []) for k in r}
            auth = "service" if "serviceKey" in schemes else "tenant" if schemes else "none"
            assert ttstore.OPERATIONS[oid] == (method.upper(), path, auth)
            assert callable(getattr(ttstore.Client, ttstore.METHOD_OF[oid], None)), oid


ARRAYS = [
    np.sin(np.arange(32, dtype=np.float64)).reshape(4, 8) * 1e3,
    (np.arange(64, dtype=np.float32) / 7),
    np.array([[1, 2], [0.5, -1]], dtype=np.float16),
    (np.arange(15, dtype=np.int64) * 10_000_000_000 - 7).reshape(3, 5),
    ((np.arange(105, dtype=np.int32) * 7919) % 1000 - 500).reshape(3, 5, 7),
    np.arange(256, dtype=np.uint8).reshape(16, 16),
    np.array([[True, False, False], [True, True, False]]),
    np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4)),
    np.arange(8, dtype=">i4"),
    np.float64(np.pi).reshape(()),
]


@pytest.mark.parametrize("array", ARRAYS, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_put_and_serve_round_trip_bit_for_bit(client, array):
    key = f"arr/{array.dtype.str}/{'x'.join(map(str, array.shape))}/{secrets.token_hex(2)}"
    put = client.put(key, array, domain="lossless", metadata={"n": int(array.size)})
    assert put["version"] == 1 and put["kind"] == "array"
    assert put["shape"] == list(array.shape)
    back = client.serve(key)
    assert back.dtype == array.dtype.newbyteorder("=") or back.dtype == array.dtype
    assert back.shape == array.shape
    np.testing.assert_array_equal(back, array)


def test_blob_get_cores_and_delete(client):
    blob = bytes(range(256)) * 1000
    assert client.put("blob/1", blob)["kind"] == "blob"
    assert client.serve("blob/1").tobytes() == blob
    a = np.outer(np.sin(np.arange(64) / 10), np.exp(-np.arange(64) / 30))  # smooth, rank 1: has cores
    client.put("m/a", a, metadata={"run": 7})
    assert client.put("m/a", a, tolerance=1e-3)["version"] == 2
    got = client.get("m/a", version=1)
    assert got["metadata"] == {"run": 7}
    entry = client.serve_entry("m/a", version=2)
    assert entry.version == 2 and entry.key == "m/a"
    cores = client.serve_json("m/a", target="cores")
    arrays = [ttstore.from_npy(base64.b64decode(c["data_b64"])) for c in cores["cores"]]
    assert client.put_cores("m/b", arrays, shape=[64, 64], dtype="float64", layout=cores["layout"])["version"] == 1
    np.testing.assert_allclose(client.serve("m/b"), client.serve("m/a"))
    assert client.delete("m/a")["deleted"] is True
    with pytest.raises(ttstore.NotFoundError) as e:
        client.get("m/a")
    assert e.value.code == "not_found" and e.value.status == 404


def test_pages_over_2500_keys(client):
    core = np.array([1, 2], dtype=np.float32).reshape(1, 2, 1)
    for b in range(3):
        n = 1000 if b < 2 else 500
        entries = [{"key": f"page/{b * 1000 + i:04d}", "cores": [core], "shape": [2], "metadata": {"even": (b * 1000 + i) % 2 == 0}} for i in range(n)]
        assert client.put_cores_batch(entries)["count"] == n
    first = client.list(prefix="page/", limit=1000)
    assert first["count"] == 1000 and first["total"] == 2500
    keys = [k["key"] for k in client.iter_keys(prefix="page/", page_size=1000)]
    assert len(keys) == 2500 and keys == sorted(set(keys))
    assert sum(1 for _ in client.iter_search({"even": True}, page_size=400)) == 1250


def test_queries(client):
    for i in range(4):
        client.put(f"q/{i}", np.sin(np.arange(64) / (i + 1)), metadata={"group": i % 2})
    assert client.similarity("q/0", "q/0")["score"] == pytest.approx(1, abs=1e-5)
    top = client.topk("q/1", k=2)
    assert len(top) == 2 and "q/1" not in [k for k, _ in top]  # the query itself is left out
    assert client.topk_vector(np.sin(np.arange(64) / 3), k=1)[0][0] == "q/2"
    found = client.search({"group": 1})
    assert sorted(r["key"] for r in found["results"]) == ["q/1", "q/3"]


def test_simulate_and_wait(client):
    job = client.simulate("poisson_2d", n_bits=9, output_key_prefix="sim/p")
    done = job.wait(interval_s=0.05, progress=False, timeout_s=60)
    assert done["status"] == "completed"
    assert sorted(done["outputs"]) == ["sim/p/f", "sim/p/u"]
    assert client.serve("sim/p/u").shape == (512, 512)
    assert job.job_id in [j["job_id"] for j in client.list_simulations(status="completed")["jobs"]]
    with pytest.raises(ttstore.ConflictError) as e:
        job.cancel()
    assert e.value.code == "job_finished"


def test_operator_endpoints(server, operator):
    tid = f"op-{secrets.token_hex(4)}"
    t = operator.create_tenant(tid, plan="starter")
    assert t["api_key"].startswith("tts_")
    assert tid in [x["tenant_id"] for x in operator.tenants()["tenants"]]
    assert "extra" in operator.add_namespace(tid, "extra")["namespaces"]
    rotated = operator.rotate_key(tid)
    assert operator.update_tier(tid, "builder")["plan"] == "builder"
    assert operator.tenant_usage(tid)["tenant_id"] == tid
    assert isinstance(operator.usage()["tenants"], list)
    assert operator.reload()["reloaded"] is True
    assert operator.metrics().startswith("# HELP")
    assert operator.deactivate(tid)["active"] is False
    with pytest.raises(ttstore.AuthenticationError):
        ttstore.Client(server["url"], api_key=rotated["api_key"]).list()
    anon = ttstore.Client(server["url"], api_key="", service_key="")
    assert isinstance(anon.health()["status"], str)
    assert "service" in anon.root()
    assert "<html" in anon.docs().lower()


def test_own_usage_and_namespaces(client):
    client.list()
    mine = client.own_usage()
    assert mine["cus_used"] >= 0.1 and mine["breakdown"]["list"] >= 0.1
    assert client.own_usage(period="2001-01")["cus_used"] == 0
    assert [n["namespace"] for n in client.namespaces()["namespaces"]] == ["default"]


def test_problems_are_typed_exceptions(server, client):
    with pytest.raises(ttstore.AuthenticationError) as e:
        ttstore.Client(server["url"], api_key="tts_" + "A" * 43).list()
    assert e.value.code == "invalid_api_key"
    with pytest.raises(ttstore.ForbiddenError) as e:
        client.list("elsewhere")
    assert e.value.code == "namespace_forbidden"
    with pytest.raises(ttstore.BadRequestError) as e:
        client.put("x", np.arange(3.0), tolerance=2)
    assert e.value.code == "invalid_request" and "field" in e.value.problem
    with pytest.raises(ttstore.ForbiddenError) as e:
        ttstore.Client(server["url"], service_key=client.api_key).tenants()
    assert e.value.code == "admin_only"


def test_rate_limited_calls_succeed_after_waiting_retry_after(server, operator):
    t = operator.create_tenant(f"rl-{secrets.token_hex(4)}", plan="enterprise", rate_limit={"requests": 2, "window_s": 2})
    events = []
    c = ttstore.Client(server["url"], api_key=t["api_key"], on_retry=events.append)
    for _ in range(5):
        c.list()
    assert events, "the tenant was never rate limited"
    for e in events:
        assert e["status"] == 429 and e["code"] == "rate_limited"
        assert e["wait_s"] >= e["retry_after_s"]


class _Flaky(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):  # noqa: N802
        _Flaky.hits += 1
        ok = _Flaky.hits > 2
        body = json.dumps({"status": "ok"} if ok else {"type": "/problems/overloaded", "title": "Overloaded", "status": 503, "detail": "busy", "code": "overloaded"}).encode()
        self.send_response(200 if ok else 503)
        self.send_header("Content-Type", "application/json" if ok else "application/problem+json")
        self.send_header("Retry-After", "0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_503_is_retried_with_backoff_then_given_up():
    srv = http.server.HTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        events = []
        c = ttstore.Client(url, retry=ttstore.RetryPolicy(base_s=0.01), on_retry=events.append)
        assert c.health()["status"] == "ok"
        assert [e["status"] for e in events] == [503, 503]
        _Flaky.hits = -100
        with pytest.raises(ttstore.UnavailableError) as e:
            ttstore.Client(url, retry=ttstore.RetryPolicy(retries=2, base_s=0.001)).health()
        assert e.value.code == "overloaded"
    finally:
        srv.shutdown()


def test_timeout_is_a_timeout_error():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        started = time.monotonic()
        with pytest.raises(ttstore.TimeoutError):
            ttstore.Client(f"http://127.0.0.1:{s.getsockname()[1]}", timeout_s=0.2).health()
        assert time.monotonic() - started < 5
    finally:
        s.close()
