#!/usr/bin/env python3
"""Textbook TT-SVD in PyTorch on the GPU, the baseline of bench/gpu.ts (npm run bench:gpu).

Oseledets' TT-SVD (2011): one torch.linalg.svd(full_matrices=False) per unfolding of the QTT
(row-major, modes of 2) vector, truncated with delta = tol * ||A||_F / sqrt(d - 1). The field is
moved to the device before the clock starts (device-resident, like the engine's first measurement);
the clock stops after the last core is formed (torch.cuda.synchronize). Best of 3 runs after a
warm-up.

Usage: python3 ttsvd_torch.py FIELD.npy TOL [float32|float64]
Prints one JSON line: {"device", "dtype", "seconds", "gbps", "ranks", "relative_error"}.
"""
import json
import math
import sys
import time

import numpy as np

try:
    import torch
except ImportError:
    print(json.dumps({"error": "python3 has no torch (pip install torch)"}))
    sys.exit(2)


DRIVERS = [None, "gesvd", "gesvda"]  # torch's choice first; cuSOLVER's gesvdj refuses very wide matrices
used = set()


def svd(c):
    """torch.linalg.svd(c, full_matrices=False) with the first cuSOLVER driver that accepts c's shape."""
    last = None
    for driver in DRIVERS if c.is_cuda else [None]:
        try:
            out = torch.linalg.svd(c, full_matrices=False, driver=driver)
            used.add(driver or "default")
            return out
        except RuntimeError as e:  # torch._C._LinAlgError is a RuntimeError
            last = e
    raise last


def tt_svd(vec, modes, tol):
    d = len(modes)
    delta = tol * torch.linalg.vector_norm(vec) / math.sqrt(max(1, d - 1))
    cores, r, c = [], 1, vec
    for k in range(d - 1):
        c = c.reshape(r * modes[k], -1)
        u, s, vt = svd(c)
        tail = torch.flip(torch.cumsum(torch.flip(s * s, [0]), 0), [0])  # tail[i] = sum_{j>=i} s_j^2
        keep = int(torch.count_nonzero(tail > delta * delta).item())
        rk = max(1, keep)
        cores.append(u[:, :rk].reshape(r, modes[k], rk))
        c = s[:rk, None] * vt[:rk, :]
        r = rk
    cores.append(c.reshape(r, modes[-1], 1))
    return cores


def reconstruct(cores):
    y = cores[0].reshape(-1, cores[0].shape[-1])
    for g in cores[1:]:
        y = (y @ g.reshape(g.shape[0], -1)).reshape(-1, g.shape[-1])
    return y.reshape(-1)


def main():
    path, tol = sys.argv[1], float(sys.argv[2])
    dtype = {"float32": torch.float32, "float64": torch.float64}[sys.argv[3] if len(sys.argv) > 3 else "float32"]
    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch sees no CUDA device"}))
        sys.exit(2)
    dev = torch.device("cuda:0")
    x = np.load(path, mmap_mode="r")
    vec = torch.from_numpy(np.array(x).reshape(-1)).to(dev, dtype=dtype)
    n = vec.numel()
    modes = [2] * int(round(math.log2(n)))
    assert 2 ** len(modes) == n, "the field must have 2^k elements"
    tt_svd(vec, modes, tol)  # warm-up (cuSOLVER handles, kernels)
    torch.cuda.synchronize()
    best, cores = float("inf"), None
    for _ in range(3):
        t0 = time.perf_counter()
        cores = tt_svd(vec, modes, tol)
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    y = reconstruct(cores)
    err = (torch.linalg.vector_norm((y - vec).double()) / torch.linalg.vector_norm(vec.double())).item()
    ranks = [1] + [int(g.shape[-1]) for g in cores]
    print(json.dumps({"device": torch.cuda.get_device_name(0), "dtype": str(dtype).replace("torch.", ""),
                      "seconds": best, "gbps": n * x.dtype.itemsize / best / 1e9, "ranks": ranks,
                      "relative_error": err, "drivers": sorted(used)}))


if __name__ == "__main__":
    main()
