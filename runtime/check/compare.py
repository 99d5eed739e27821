#!/usr/bin/python3
"""Compare two parc-rt-kernel-check output directories case by case.

    compare.py REFERENCE_DIR CANDIDATE_DIR   (usually cpu, then cuda)

A case passes when both backends returned the same status and, where both
ran it, every output matches: integers and bools exactly, floats with

    max|candidate - reference| / max|reference| <= tol(dtype)

(f32 1e-4, f16 1e-2, bf16 2e-2; infinities and NaNs must sit at the same
places). A case only the candidate runs (the reference backend reports
PARC_RT_UNSUPPORTED) has nothing to be compared with: it is listed as
"unchecked" and counts neither as passed nor as failed. Exit status 1 on
any failure.
"""
import os
import sys

import numpy as np

TOL = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 2e-2, "float64": 1e-9}


def statuses(d):
    out = {}
    with open(os.path.join(d, "status.txt")) as f:
        for line in f:
            name, status = line.split()
            out[name] = status
    return out


def load(path):
    """bf16 is stored as '<V2': widen it to f32 by hand."""
    a = np.load(path)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:
        bits = a.view(np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32), "bfloat16"
    return a, a.dtype.name


def compare(ref_path, cand_path):
    ref, kind = load(ref_path)
    cand, cand_kind = load(cand_path)
    if ref.shape != cand.shape or kind != cand_kind:
        return False, f"shape/dtype {cand.shape} {cand_kind} vs {ref.shape} {kind}"
    if kind not in TOL:
        bad = np.count_nonzero(ref != cand)
        return bad == 0, f"{bad} of {ref.size} elements differ"
    r, c = ref.astype(np.float64), cand.astype(np.float64)
    special = ~np.isfinite(r) | ~np.isfinite(c)
    same_special = np.array_equal(np.isnan(r), np.isnan(c)) and np.array_equal(
        np.where(np.isinf(r), r, 0), np.where(np.isinf(c), c, 0))
    if not same_special:
        return False, "inf/nan at different places"
    r, c = r[~special], c[~special]
    if r.size == 0:
        return True, "no finite elements"
    scale = np.abs(r).max()
    err = np.abs(r - c).max() / (scale if scale else 1.0)
    return err <= TOL[kind], f"rel err {err:.2e} (tol {TOL[kind]:.0e})"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ref_dir, cand_dir = sys.argv[1:]
    ref, cand = statuses(ref_dir), statuses(cand_dir)
    passed = failed = unchecked = 0
    for name in sorted(set(ref) | set(cand)):
        rs, cs = ref.get(name, "missing"), cand.get(name, "missing")
        if rs != cs:
            if rs == "PARC_RT_UNSUPPORTED" and cs == "PARC_RT_OK":
                unchecked += 1
                print(f"{name:<44} unchecked (reference backend does not run it)")
                continue
            failed += 1
            print(f"{name:<44} FAIL: status {cs} vs reference {rs}")
            continue
        files = sorted(f for f in os.listdir(ref_dir)
                       if f.endswith(".npy") and f[:-4].split(".")[0] == name)
        ok, notes = True, []
        for f in files:
            if not os.path.exists(os.path.join(cand_dir, f)):
                ok, note = False, "missing"
            else:
                good, note = compare(os.path.join(ref_dir, f), os.path.join(cand_dir, f))
                ok &= good
            notes.append(f"{f[:-4]}: {note}")
        passed += ok
        failed += not ok
        print(f"{name:<44} {'PASS' if ok else 'FAIL'} ({rs}; {'; '.join(notes) or 'no outputs'})")
    print(f"kernel check: {passed} passed, {failed} failed, {unchecked} unchecked")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
