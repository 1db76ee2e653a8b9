"""Dense brute-force baseline of bench/query.ts: top-k by cosine over arrays held in memory.

Reads a raw float32 file of n rows (the reconstructed arrays, C order), and times what a dense store
would do for one query: one BLAS matrix-vector product (A @ q), the cosine scaling by precomputed
row norms, and the top-k selection (query row left out, ties by row index = key order). Prints one
JSON line: {"times_ms": [...], "top": [row, ...], "scores": [...], "blas": "...", "threads": ...}.

usage: /usr/bin/python3 query_dense.py FILE ROWS COLS QUERY_ROW K REPS
"""
import json
import sys
import time

import numpy as np


def top_k(scores, k):
    part = np.argpartition(-scores, k)[:k]
    return sorted(part.tolist(), key=lambda i: (-scores[i], i))


def main():
    path, rows, cols, qi, k, reps = sys.argv[1], *map(int, sys.argv[2:7])
    a = np.fromfile(path, dtype=np.float32, count=rows * cols).reshape(rows, cols)
    q = a[qi].copy()
    norms = np.sqrt(np.einsum("ij,ij->i", a, a, dtype=np.float64)).astype(np.float32)  # kept, like the store's
    qn = np.float32(np.linalg.norm(q.astype(np.float64)))
    times = []
    top = None
    cos = None
    for _ in range(reps + 1):  # the first is a warm-up
        t0 = time.perf_counter()
        s = a @ q
        cos = s / (norms * qn)
        cos[qi] = -np.inf
        top = top_k(cos, k)
        times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({
        "times_ms": times[1:], "top": top, "scores": [float(cos[i]) for i in top], "blas": blas_name(),
        "numpy": np.__version__,
    }))


def blas_name():
    """The BLAS numpy loaded and, for OpenBLAS, the kernel set it chose (openblas_get_corename)."""
    import ctypes
    with open("/proc/self/maps") as maps:
        libs = sorted({line.split()[-1] for line in maps if "blas" in line.split()[-1]})
    for lib in libs:
        try:
            handle = ctypes.CDLL(lib)
            handle.openblas_get_corename.restype = ctypes.c_char_p
            return f"OpenBLAS {handle.openblas_get_corename().decode()} ({lib})"
        except (OSError, AttributeError):
            continue
    return ",".join(libs) or "unknown"


if __name__ == "__main__":
    main()
