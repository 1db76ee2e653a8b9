#!/usr/bin/python3
"""ZFP baseline of bench/layout.ts: each array compressed by ZFP in fixed-accuracy mode with the
max-abs error the engine measured on it as ZFP's tolerance (Debian's python3-zfpy), decompressed
and checked, so both are compared at no larger max-abs error.

Usage: /usr/bin/python3 zfp_ratio.py MANIFEST.json
MANIFEST: [{"name", "file" (.npy), "tolerance"}, ...]. Prints one JSON line per case:
{"name", "bytes" (compressed), "max_abs_error" (measured after decompression)}.
"""
import json
import sys

import numpy as np
import zfpy


def main():
    for case in json.load(open(sys.argv[1])):
        x = np.load(case["file"])
        packed = zfpy.compress_numpy(x, tolerance=case["tolerance"])
        y = zfpy.decompress_numpy(packed)
        err = float(np.max(np.abs(y.astype(np.float64) - x.astype(np.float64))))
        print(json.dumps({"name": case["name"], "bytes": len(packed), "max_abs_error": err}), flush=True)


if __name__ == "__main__":
    main()
