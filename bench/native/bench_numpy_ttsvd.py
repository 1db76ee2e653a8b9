"""Textbook numpy TT-SVD baseline (np.linalg.svd per unfolding) on the same fields as bench_core.

    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 python3 bench/native/bench_numpy_ttsvd.py 2d 0 [f64]
"""
import sys, time
import numpy as np

def field(kind, noise):
    rng = np.random.default_rng(1)
    N = 1 << 24
    if kind == "1d":
        t = np.arange(N) / N
        x = np.sin(2*np.pi*5*t) + 0.3*np.sin(2*np.pi*37*t) + np.tanh((t-0.41)/0.003)
        shape = (N,)
    else:
        n = 4096
        a = (np.arange(n) / n)[:, None]; b = (np.arange(n) / n)[None, :]
        x = np.sin(2*np.pi*(3*a+2*b)) + 0.5*np.cos(2*np.pi*7*a*b) + np.tanh((a+0.6*b-0.7)/0.01)
        shape = (n, n)
    if noise:
        x = x + noise * rng.uniform(-1, 1, x.shape)
    return x.astype(np.float32), shape

def interleave(x, shape):
    """Mode tensor of the interleaved QTT layout for power-of-two axes."""
    if len(shape) == 1:
        return x.reshape(-1)
    bits = [int(np.log2(n)) for n in shape]
    t = x.reshape([2]*sum(bits))
    # axis j's bits are axes [off_j, off_j + bits_j); order by level then axis
    offs = np.cumsum([0] + bits[:-1])
    order = [offs[j] + l for l in range(max(bits)) for j in range(len(shape)) if l < bits[j]]
    return np.ascontiguousarray(t.transpose(order)).reshape(-1)

def tt_svd(v, d, tol):
    norm = np.linalg.norm(v)
    delta = tol * norm / np.sqrt(d - 1)
    C = v
    r = 1
    cores = []
    ranks = [1]
    for k in range(d - 1):
        C = C.reshape(r * 2, -1)
        U, S, Vt = np.linalg.svd(C, full_matrices=False)
        tail = np.cumsum((S**2)[::-1])[::-1]
        rk = int(np.sum(tail > delta**2)) or 1
        rk = max(rk, 1)
        cores.append(U[:, :rk].reshape(r, 2, rk))
        C = S[:rk, None] * Vt[:rk]
        r = rk
        ranks.append(r)
    cores.append(C.reshape(r, 2, 1))
    ranks.append(1)
    return cores, ranks

kind = sys.argv[1] if len(sys.argv) > 1 else "2d"
noise = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
as_f64 = len(sys.argv) > 3 and sys.argv[3] == "f64"
x, shape = field(kind, noise)
for tol in (1e-3, 1e-6):
    t0 = time.perf_counter()
    v = interleave(x, shape)
    if as_f64:
        v = v.astype(np.float64)
    cores, ranks = tt_svd(v, 24, tol)
    dt = time.perf_counter() - t0
    print(f"numpy tol {tol:g} ({'f64' if as_f64 else 'f32'}): {dt:.3f} s, max rank {max(ranks)}, ranks {ranks}")
