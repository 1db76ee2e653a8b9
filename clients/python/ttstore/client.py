"""The Python client: numpy arrays in and out as binary .npy bodies, the service's problems as typed
exceptions, and 429/503 retried with exponential backoff and jitter (retry.py)."""

from __future__ import annotations

import io
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

import numpy as np

from .errors import TimeoutError, TtstoreError, api_error
from .retry import RETRY_STATUSES, RetryPolicy, backoff_s, retry_after_seconds

NPY = "application/x-npy"
NPY_MAGIC = b"\x93NUMPY"
CHUNK = 64 * 1024


def to_npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return buf.getvalue()


def from_npy(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


def _progress(label: str) -> Optional[Callable[[int, Optional[int]], None]]:
    """tqdm when installed, else a plain line; only on a terminal."""
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm  # type: ignore

        bar = tqdm(desc=label, unit="B", unit_scale=True, leave=False)

        def update(done: int, total: Optional[int]) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        return update
    except ImportError:

        def line(done: int, total: Optional[int]) -> None:
            pct = f"{100 * done / total:5.1f}%" if total else ""
            sys.stderr.write(f"\r{label} {pct} {done} B")
            if total is not None and done >= total:
                sys.stderr.write("\n")

        return line


@dataclass
class Served:
    """A dense serve: the array (a blob as 1-D uint8) and what the headers say about it."""

    key: str
    namespace: str
    version: int
    kind: str
    verdict: str
    array: np.ndarray


@dataclass
class Job:
    """A submitted simulation; ``wait()`` polls it to the end."""

    client: "Client"
    status: Dict[str, Any] = field(default_factory=dict)

    @property
    def job_id(self) -> str:
        return str(self.status["job_id"])

    def refresh(self) -> Dict[str, Any]:
        self.status = self.client.simulation_status(self.job_id)
        return self.status

    def cancel(self) -> Dict[str, Any]:
        self.status = self.client.cancel_simulation(self.job_id)
        return self.status

    def wait(self, interval_s: float = 0.25, progress: Optional[bool] = None, timeout_s: Optional[float] = None) -> Dict[str, Any]:
        show = _progress(f"{self.status.get('solver', 'job')} {self.job_id}") if progress is not False else None
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            s = self.refresh()
            p = s.get("progress") or {}
            if show is not None:
                show(int(p.get("steps_completed") or 0), p.get("steps_total") or None)
            if s.get("status") in ("completed", "failed"):
                return s
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {self.job_id} still {s.get('status')} after {timeout_s} s")
            time.sleep(interval_s)


# Each operation of the OpenAPI document: (method, path, credential). tests/test_client.py checks that
# this table and the client's methods cover the document served by the server.
OPERATIONS: Dict[str, tuple] = {
    "put": ("POST", "/v1/put", "tenant"),
    "put_cores": ("POST", "/v1/put_cores", "tenant"),
    "put_cores_batch": ("POST", "/v1/put_cores_batch", "tenant"),
    "get": ("GET", "/v1/get/{namespace}/{key}", "tenant"),
    "serve": ("POST", "/v1/serve", "tenant"),
    "delete": ("DELETE", "/v1/delete/{namespace}/{key}", "tenant"),
    "list": ("GET", "/v1/list/{namespace}", "tenant"),
    "similarity": ("POST", "/v1/query/similarity", "tenant"),
    "topk": ("POST", "/v1/query/topk", "tenant"),
    "topk_vector": ("POST", "/v1/query/topk_vector", "tenant"),
    "search": ("POST", "/v1/query/search", "tenant"),
    "simulation_submit": ("POST", "/v1/simulation/submit", "tenant"),
    "simulation_status": ("GET", "/v1/simulation/status/{job_id}", "tenant"),
    "simulation_cancel": ("POST", "/v1/simulation/cancel/{job_id}", "tenant"),
    "simulation_list": ("GET", "/v1/simulation/list", "tenant"),
    "own_usage": ("GET", "/v1/usage", "tenant"),
    "own_namespaces": ("GET", "/v1/namespaces", "tenant"),
    "create_tenant": ("POST", "/gate/onboard/create", "service"),
    "rotate_key": ("POST", "/gate/onboard/rotate-key", "service"),
    "add_namespace": ("POST", "/gate/onboard/add-namespace", "service"),
    "update_tier": ("POST", "/gate/onboard/update-tier", "service"),
    "deactivate": ("POST", "/gate/admin/deactivate", "service"),
    "reload": ("POST", "/gate/admin/reload", "service"),
    "tenants": ("GET", "/gate/admin/tenants", "service"),
    "usage_all": ("GET", "/gate/admin/usage", "service"),
    "usage_tenant": ("GET", "/gate/admin/usage/{tenant_id}", "service"),
    "metrics": ("GET", "/gate/metrics", "service"),
    "health": ("GET", "/gate/health", "none"),
    "openapi": ("GET", "/openapi.json", "none"),
    "docs": ("GET", "/docs", "none"),
    "root": ("GET", "/", "none"),
    "console": ("GET", "/console", "none"),
    "console_asset": ("GET", "/console/assets/{file}", "none"),
}

# The client method of each operation.
METHOD_OF = {
    "put": "put",
    "put_cores": "put_cores",
    "put_cores_batch": "put_cores_batch",
    "get": "get",
    "serve": "serve",
    "delete": "delete",
    "list": "list",
    "similarity": "similarity",
    "topk": "topk",
    "topk_vector": "topk_vector",
    "search": "search",
    "simulation_submit": "simulate",
    "simulation_status": "simulation_status",
    "simulation_cancel": "cancel_simulation",
    "simulation_list": "list_simulations",
    "own_usage": "own_usage",
    "own_namespaces": "namespaces",
    "create_tenant": "create_tenant",
    "rotate_key": "rotate_key",
    "add_namespace": "add_namespace",
    "update_tier": "update_tier",
    "deactivate": "deactivate",
    "reload": "reload",
    "tenants": "tenants",
    "usage_all": "usage",
    "usage_tenant": "tenant_usage",
    "metrics": "metrics",
    "health": "health",
    "openapi": "openapi",
    "docs": "docs",
    "root": "root",
    "console": "console",
    "console_asset": "console_asset",
}


class Client:
    """``Client(url, api_key=..., service_key=...)``; defaults from TTSTORE_URL, TTSTORE_API_KEY and
    TTSTORE_SERVICE_KEY."""

    def __init__(
        self,
        url: Optional[str] = None,
        api_key: Optional[str] = None,
        service_key: Optional[str] = None,
        namespace: str = "default",
        retry: RetryPolicy = RetryPolicy(),
        timeout_s: float = 120.0,
        on_retry: Optional[Callable[[Dict[str, Any]], None]] = None,
    ):
        url = url or os.environ.get("TTSTORE_URL")
        if not url:
            raise TtstoreError("no service URL: pass url or set TTSTORE_URL")
        self.url = url.rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("TTSTORE_API_KEY")
        self.service_key = service_key if service_key is not None else os.environ.get("TTSTORE_SERVICE_KEY")
        self.namespace = namespace
        self.retry = retry
        self.timeout_s = timeout_s
        self.on_retry = on_retry

    # ---- storage ----

    def put(
        self,
        key: str,
        data: Union[np.ndarray, bytes],
        *,
        namespace: Optional[str] = None,
        tolerance: Optional[float] = None,
        max_rank: Optional[int] = None,
        domain: Optional[str] = None,
        metadata: Optional[Dict[str, Any]] = None,
        progress: Optional[bool] = None,
    ) -> Dict[str, Any]:
        """Store an array (sent as .npy) or bytes (a blob unless they are an .npy file)."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            body, ctype = bytes(data), NPY if bytes(data[:6]) == NPY_MAGIC else "application/octet-stream"
        else:
            body, ctype = to_npy(data), NPY
        headers = {"Content-Type": ctype}
        if metadata is not None:
            headers["X-Ttstore-Metadata"] = json.dumps(metadata, ensure_ascii=True)
        query = {"key": key, "namespace": namespace or self.namespace, "tolerance": tolerance, "max_rank": max_rank, "domain": domain}
        show = _progress(f"put {key}") if progress is not False else None
        return self._json("put", query=query, body=body, headers=headers, upload_progress=show)

    def put_cores(self, key: str, cores: List[np.ndarray], *, shape: List[int], dtype: str = "float32", layout: Optional[str] = None, namespace: Optional[str] = None, **extra: Any) -> Dict[str, Any]:
        return self._json("put_cores", json_body=self._ns({"key": key, "cores": [_b64(c) for c in cores], "shape": list(shape), "dtype": dtype, "layout": layout, **extra}, namespace))

    def put_cores_batch(self, entries: List[Dict[str, Any]], *, namespace: Optional[str] = None) -> Dict[str, Any]:
        """Each entry: key, cores (numpy arrays or {"data_b64": ...}), shape, and optional fields."""
        wire = [{**e, "cores": [c if isinstance(c, dict) else _b64(c) for c in e["cores"]]} for e in entries]
        return self._json("put_cores_batch", json_body=self._ns({"entries": wire}, namespace))

    def get(self, key: str, *, namespace: Optional[str] = None, version: Optional[int] = None) -> Dict[str, Any]:
        return self._json("get", path={"namespace": namespace or self.namespace, "key": key}, query={"version": version})

    def serve(self, key: str, *, namespace: Optional[str] = None, version: Optional[int] = None, progress: Optional[bool] = None, **extra: Any) -> np.ndarray:
        """The dense array, downloaded as binary .npy (a blob as 1-D uint8)."""
        return self.serve_entry(key, namespace=namespace, version=version, progress=progress, **extra).array

    def serve_entry(self, key: str, *, namespace: Optional[str] = None, version: Optional[int] = None, progress: Optional[bool] = None, **extra: Any) -> Served:
        body = self._ns({"key": key, "version": version, "target": "dense", **extra}, namespace)
        show = _progress(f"serve {key}") if progress is not False else None
        data, headers = self._send("serve", json_body=body, accept=NPY, download_progress=show)
        array = from_npy(data) if data[:6] == NPY_MAGIC else np.frombuffer(data, dtype=np.uint8)
        return Served(
            key=urllib.parse.unquote(headers.get("X-Ttstore-Key", key)),
            namespace=headers.get("X-Ttstore-Namespace", namespace or self.namespace),
            version=int(headers.get("X-Ttstore-Version", 0)),
            kind=headers.get("X-Ttstore-Kind", ""),
            verdict=headers.get("X-Ttstore-Verdict", ""),
            array=array,
        )

    def serve_json(self, key: str, *, target: str = "cores", namespace: Optional[str] = None, **extra: Any) -> Dict[str, Any]:
        """serve as JSON: target cores (the tensor train), gpu, or dense as data_b64."""
        return self._json("serve", json_body=self._ns({"key": key, "target": target, **extra}, namespace))

    def delete(self, key: str, *, namespace: Optional[str] = None) -> Dict[str, Any]:
        return self._json("delete", path={"namespace": namespace or self.namespace, "key": key})

    def list(self, namespace: Optional[str] = None, *, prefix: Optional[str] = None, limit: Optional[int] = None, offset: Optional[int] = None) -> Dict[str, Any]:
        """One page of keys."""
        return self._json("list", path={"namespace": namespace or self.namespace}, query={"prefix": prefix, "limit": limit, "offset": offset})

    def iter_keys(self, namespace: Optional[str] = None, *, prefix: Optional[str] = None, page_size: int = 1000) -> Iterator[Dict[str, Any]]:
        """Every key under a prefix, page after page."""
        return _pages(lambda off: self.list(namespace, prefix=prefix, limit=page_size, offset=off), "keys")

    # ---- queries ----

    def similarity(self, key_a: str, key_b: str, *, metric: Optional[str] = None, namespace: Optional[str] = None) -> Dict[str, Any]:
        return self._json("similarity", json_body=self._ns({"key_a": key_a, "key_b": key_b, "metric": metric}, namespace))

    def topk(self, query_key: str, k: Optional[int] = None, *, metric: Optional[str] = None, filters: Optional[Dict[str, Any]] = None, namespace: Optional[str] = None) -> List[tuple]:
        """[(key, score)], best first."""
        r = self._json("topk", json_body=self._ns({"query_key": query_key, "k": k, "metric": metric, "filters": filters}, namespace))
        return [(key, score) for key, score in r["results"]]

    def topk_vector(self, vector: np.ndarray, k: Optional[int] = None, *, metric: Optional[str] = None, filters: Optional[Dict[str, Any]] = None, namespace: Optional[str] = None, **extra: Any) -> List[tuple]:
        body = {"data_b64": _b64(vector)["data_b64"], "k": k, "metric": metric, "filters": filters, **extra}
        r = self._json("topk_vector", json_body=self._ns(body, namespace))
        return [(key, score) for key, score in r["results"]]

    def search(self, filters: Dict[str, Any], *, namespace: Optional[str] = None, limit: Optional[int] = None, offset: Optional[int] = None) -> Dict[str, Any]:
        return self._json("search", json_body=self._ns({"filters": filters, "limit": limit, "offset": offset}, namespace))

    def iter_search(self, filters: Dict[str, Any], *, namespace: Optional[str] = None, page_size: int = 1000) -> Iterator[Dict[str, Any]]:
        """Every match of a metadata search, page after page."""
        return _pages(lambda off: self.search(filters, namespace=namespace, limit=page_size, offset=off), "results")

    # ---- simulations ----

    def simulate(self, solver: str, *, namespace: Optional[str] = None, output_key_prefix: Optional[str] = None, **params: Any) -> Job:
        """Queue a solver run; ``.wait()`` on the answer polls it to the end."""
        body = self._ns({"solver": solver, "params": params, "output_key_prefix": output_key_prefix}, namespace)
        return Job(self, self._json("simulation_submit", json_body=body))

    def simulation_status(self, job_id: str) -> Dict[str, Any]:
        return self._json("simulation_status", path={"job_id": job_id})

    def cancel_simulation(self, job_id: str) -> Dict[str, Any]:
        return self._json("simulation_cancel", path={"job_id": job_id})

    def list_simulations(self, *, namespace: Optional[str] = None, status: Optional[str] = None, limit: Optional[int] = None) -> Dict[str, Any]:
        return self._json("simulation_list", query={"namespace": namespace, "status": status, "limit": limit})

    # ---- operator (service key) ----

    def create_tenant(self, tenant_id: str, **fields: Any) -> Dict[str, Any]:
        return self._json("create_tenant", json_body={"tenant_id": tenant_id, **fields})

    def rotate_key(self, tenant_id: str) -> Dict[str, Any]:
        return self._json("rotate_key", json_body={"tenant_id": tenant_id})

    def add_namespace(self, tenant_id: str, namespace: str) -> Dict[str, Any]:
        return self._json("add_namespace", json_body={"tenant_id": tenant_id, "namespace": namespace})

    def update_tier(self, tenant_id: str, plan: str, **fields: Any) -> Dict[str, Any]:
        return self._json("update_tier", json_body={"tenant_id": tenant_id, "plan": plan, **fields})

    def deactivate(self, tenant_id: str) -> Dict[str, Any]:
        return self._json("deactivate", json_body={"tenant_id": tenant_id})

    def reload(self) -> Dict[str, Any]:
        return self._json("reload", json_body={})

    def own_usage(self, period: Optional[str] = None) -> Dict[str, Any]:
        """The caller's own usage record (the tenant key's; free)."""
        return self._json("own_usage", query={"period": period})

    def namespaces(self) -> Dict[str, Any]:
        """The caller's namespaces and what its key may do in each (free)."""
        return self._json("own_namespaces")

    def tenants(self) -> Dict[str, Any]:
        return self._json("tenants")

    def usage(self, period: Optional[str] = None) -> Dict[str, Any]:
        return self._json("usage_all", query={"period": period})

    def tenant_usage(self, tenant_id: str, period: Optional[str] = None) -> Dict[str, Any]:
        return self._json("usage_tenant", path={"tenant_id": tenant_id}, query={"period": period})

    def metrics(self) -> str:
        return self._send("metrics")[0].decode("utf-8")

    # ---- public ----

    def health(self) -> Dict[str, Any]:
        return self._json("health")

    def openapi(self) -> Dict[str, Any]:
        return self._json("openapi")

    def docs(self) -> str:
        return self._send("docs")[0].decode("utf-8")

    def root(self) -> Dict[str, Any]:
        return self._json("root")

    def console(self) -> str:
        """The web console's page (HTML, for a browser)."""
        return self._send("console")[0].decode("utf-8")

    def console_asset(self, file: str) -> bytes:
        """A file of the console's build, by the name its page gives."""
        return self._send("console_asset", path={"file": file})[0]

    # ---- transport ----

    def _ns(self, body: Dict[str, Any], namespace: Optional[str]) -> Dict[str, Any]:
        return {"namespace": namespace or self.namespace, **{k: v for k, v in body.items() if v is not None}}

    def _json(self, op: str, **kw: Any) -> Any:
        return json.loads(self._send(op, **kw)[0])

    def _send(
        self,
        op: str,
        *,
        path: Optional[Dict[str, Any]] = None,
        query: Optional[Dict[str, Any]] = None,
        json_body: Any = None,
        body: Optional[bytes] = None,
        headers: Optional[Dict[str, str]] = None,
        accept: Optional[str] = None,
        upload_progress: Optional[Callable[[int, Optional[int]], None]] = None,
        download_progress: Optional[Callable[[int, Optional[int]], None]] = None,
    ) -> tuple:
        method, template, auth = OPERATIONS[op]
        url = self.url + "".join(
            urllib.parse.quote(str((path or {})[part[1:-1]]), safe="") if part.startswith("{") else part
            for part in _segments(template)
        )
        q = {k: str(v) for k, v in (query or {}).items() if v is not None}
        if q:
            url += "?" + urllib.parse.urlencode(q)
        h = dict(headers or {})
        key = self.service_key if auth == "service" else self.api_key if auth == "tenant" else None
        if key:
            h["Authorization"] = f"Bearer {key}"
        if accept:
            h["Accept"] = accept
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            h["Content-Type"] = "application/json"
        attempt = 0
        while True:
            try:
                return self._attempt(method, url, h, body, upload_progress, download_progress)
            except _Refused as r:
                err = api_error(r.problem, r.status, r.retry_after_s)
                wait = backoff_s(self.retry, attempt, r.retry_after_s) if r.status in RETRY_STATUSES else None
                if wait is None:
                    raise err from None
                if self.on_retry is not None:
                    self.on_retry({"operation": op, "attempt": attempt, "status": r.status, "code": err.code, "retry_after_s": r.retry_after_s, "wait_s": wait})
                time.sleep(wait)
                attempt += 1

    def _attempt(self, method, url, headers, body, upload_progress, download_progress) -> tuple:
        data: Any = body
        if body is not None and upload_progress is not None:
            data = _Uploading(body, upload_progress)
            headers = {**headers, "Content-Length": str(len(body))}
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                return _read(res, download_progress), res.headers
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                problem = json.loads(text)
                if not isinstance(problem, dict) or "code" not in problem:
                    raise ValueError
            except ValueError:
                problem = {"status": e.code, "code": f"http_{e.code}", "title": str(e.reason), "detail": text[:200].decode("utf-8", "replace")}
            raise _Refused(e.code, problem, retry_after_seconds(e.headers.get("Retry-After"))) from None
        except socket.timeout as e:
            raise TimeoutError(f"{method} {url} took over {self.timeout_s} s") from e
        except urllib.error.URLError as e:
            if isinstance(e.reason, socket.timeout):
                raise TimeoutError(f"{method} {url} took over {self.timeout_s} s") from e
            raise


class _Refused(Exception):
    def __init__(self, status: int, problem: Dict[str, Any], retry_after_s: Optional[float]):
        self.status, self.problem, self.retry_after_s = status, problem, retry_after_s


class _Uploading:
    """A request body that reports how much of it was sent."""

    def __init__(self, data: bytes, report: Callable[[int, Optional[int]], None]):
        self.data, self.report = data, report

    def __iter__(self):
        for at in range(0, len(self.data), CHUNK):
            chunk = self.data[at : at + CHUNK]
            yield chunk
            self.report(at + len(chunk), len(self.data))

    def __len__(self) -> int:
        return len(self.data)


def _segments(template: str) -> List[str]:
    out, rest = [], template
    while "{" in rest:
        pre, _, tail = rest.partition("{")
        name, _, rest = tail.partition("}")
        out += [pre, "{" + name + "}"]
    return out + [rest]


def _read(res, report: Optional[Callable[[int, Optional[int]], None]]) -> bytes:
    if report is None:
        return res.read()
    total = res.headers.get("Content-Length")
    total_n = int(total) if total is not None else None
    chunks, done = [], 0
    while True:
        chunk = res.read(CHUNK)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        done += len(chunk)
        report(done, total_n)


def _pages(page: Callable[[int], Dict[str, Any]], field_name: str) -> Iterator[Dict[str, Any]]:
    offset = 0
    while True:
        p = page(offset)
        items = p.get(field_name) or []
        yield from items
        offset += len(items)
        if not items or offset >= p.get("total", offset + 1):
            return


def _b64(array: np.ndarray) -> Dict[str, str]:
    import base64

    return {"data_b64": base64.b64encode(to_npy(array)).decode("ascii")}
