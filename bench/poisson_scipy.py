"""Baseline for bench/solvers.ts: scipy.sparse.linalg.cg (no preconditioner) on the 5-point Dirichlet
Laplacian of the same grid and the same right-hand side the engine solved, to the same relative
residual. Reads the f.npy files named on the command line; prints one JSON line per file.

Run with Debian's python (/usr/bin/python3: python3-numpy, python3-scipy)."""
import json
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp
from scipy.sparse.linalg import cg


def laplacian(n):
    h = 1.0 / (n + 1)
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
    eye = sp.identity(n, format="csr")
    return ((sp.kron(t, eye) + sp.kron(eye, t)) / (h * h)).tocsr()


def main():
    tol = float(sys.argv[1])
    for path in sys.argv[2:]:
        f = np.load(path).astype(np.float64)
        n = f.shape[0]
        b = f.reshape(-1)
        t0 = time.perf_counter()
        a = laplacian(n)
        build_s = time.perf_counter() - t0
        iters = [0]

        def count(_):
            iters[0] += 1

        t0 = time.perf_counter()
        kw = {"rtol": tol} if tuple(int(x) for x in scipy.__version__.split(".")[:2]) >= (1, 12) else {"tol": tol}
        u, info = cg(a, b, maxiter=20 * n, callback=count, atol=0.0, **kw)
        solve_s = time.perf_counter() - t0
        res = float(np.linalg.norm(b - a @ u) / np.linalg.norm(b))
        print(json.dumps({"file": path, "n": n, "iterations": iters[0], "info": int(info), "build_s": build_s,
                          "solve_s": solve_s, "residual": res}), flush=True)


if __name__ == "__main__":
    main()
