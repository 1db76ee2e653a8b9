#!/usr/bin/python3
"""Reference TT-SVD in numpy, the baseline of bench/engine.ts.

The textbook algorithm (Oseledets 2011): reshape, one np.linalg.svd(full_matrices=False) per
unfolding, truncate each with delta = tol * ||A||_F / sqrt(d - 1), float64 throughout. The array is
first put in the same QTT mode order as the engine's layout (row_major or interleaved), so ranks and
core counts are comparable.

Usage: /usr/bin/python3 ttsvd_numpy.py MANIFEST.json
MANIFEST: [{"name", "file" (.npy), "layout", "modes", "tol"}, ...]. Prints one JSON line per case:
{"name", "tol", "ms", "ranks", "core_elements", "relative_error", "max_abs_error"}; ms times the
float64 conversion, the layout permutation and the TT-SVD, not the file read or the error check
(best of up to 3 runs while a run is under 1 s).
"""
import json
import sys
import time

import numpy as np


def qtt_digits(shape):
    """Per axis (m, a) with n = m * 2**a, m odd."""
    out = []
    for n in shape:
        a = 0
        while n % 2 == 0:
            n //= 2
            a += 1
        out.append((n, a))
    return out


def to_mode_tensor(x, layout):
    """The array as a vector in mode order (CONTRACT.md section 3), and the mode sizes."""
    digits = qtt_digits(x.shape)
    # C-order reshape to every axis's digits: axis j -> [m_j (if > 1), 2, ..., 2] (row_major order).
    sizes, tags = [], []
    for j, (m, a) in enumerate(digits):
        if m > 1:
            sizes.append(m)
            tags.append((0, j))
        for level in range(1, a + 1):
            sizes.append(2)
            tags.append((level, j))
    if layout == "row_major" or len(sizes) == 0:
        return x.reshape(-1), sizes
    order = sorted(range(len(tags)), key=lambda i: tags[i])  # by level, then axis
    y = np.ascontiguousarray(x.reshape(sizes).transpose(order))
    return y.reshape(-1), [sizes[i] for i in order]


def tt_svd(vec, modes, tol):
    d = len(modes)
    delta = tol * np.linalg.norm(vec) / np.sqrt(d - 1) if d > 1 else 0.0
    cores, r = [], 1
    c = vec
    for k in range(d - 1):
        c = c.reshape(r * modes[k], -1)
        u, s, vt = np.linalg.svd(c, full_matrices=False)
        tail = np.sqrt(np.cumsum((s ** 2)[::-1]))[::-1]  # tail[i]: error when keeping s[:i]
        rk = max(1, int(np.count_nonzero(tail > delta)))
        cores.append(u[:, :rk].reshape(r, modes[k], rk))
        c = s[:rk, None] * vt[:rk]
        r = rk
    cores.append(c.reshape(r, modes[-1], 1))
    return cores


def full(cores):
    x = cores[0].reshape(-1, cores[0].shape[2])
    for g in cores[1:]:
        x = (x @ g.reshape(g.shape[0], -1)).reshape(-1, g.shape[2])
    return x.reshape(-1)


def main():
    cases = json.load(open(sys.argv[1]))
    loaded = {}
    for case in cases:
        path = case["file"]
        if path not in loaded:
            loaded.clear()  # one array in memory at a time
            loaded[path] = np.load(path)
        x = loaded[path]
        ms = float("inf")
        for rep in range(3):  # best of up to 3 while a run is under 1 s, as the engine side does
            if rep > 0 and ms >= 1000:
                break
            t0 = time.perf_counter()
            vec, modes = to_mode_tensor(x.astype(np.float64), case["layout"])
            cores = tt_svd(vec, modes, case["tol"])
            ms = min(ms, (time.perf_counter() - t0) * 1e3)
        if modes != case["modes"]:
            raise SystemExit(f"{case['name']}: numpy modes {modes} != engine modes {case['modes']}")
        # Errors as the engine measures them: after the cast back to the input dtype.
        y = full(cores).astype(x.dtype).astype(np.float64)
        ref = vec.astype(x.dtype).astype(np.float64)
        diff = ref - y
        ranks = [1] + [g.shape[2] for g in cores]
        print(json.dumps({
            "name": case["name"], "tol": case["tol"], "ms": ms, "ranks": ranks,
            "core_elements": int(sum(g.size for g in cores)),
            "relative_error": float(np.linalg.norm(diff) / np.linalg.norm(ref)),
            "max_abs_error": float(np.max(np.abs(diff))),
        }), flush=True)
        del vec, cores, y, ref, diff


if __name__ == "__main__":
    main()
