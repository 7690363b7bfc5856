"""Tables and polynomials of luthier's AVX-512 pow (luthier__pow_tab, luthier__v_pow_near in
luthier_ops.h). Run: /usr/bin/python3 bench/pow_tables.py (numpy). Prints the C rows, the range
of r, the fast two-sum's condition and the fits' relative errors."""
import math
import numpy as np

f32 = np.float32


def buckets():
    """c per 1/32 of m in [1, 2): 1 in bucket 0 (x near 1 keeps its relative precision), 1/2 in
    bucket 31 (x just below a power of two), else J/64 or J/128, whichever gives the least
    max |m c - 1| while m c - 1 stays exact in float (J/2^s: |m c - 1| <= 2^(1 - s)).
    Returns [(c, max |m c - 1|)]."""
    out = []
    for b in range(32):
        lo, hi = 1 + b / 32, 1 + (b + 1) / 32
        cands = [1.0] if b == 0 else [0.5] if b == 31 else [j / 2 ** s for s in (6, 7) for j in range(2 ** (s - 1), 2 ** s + 1)]
        best = None
        for c in cands:
            w = max(abs(lo * c - 1), abs(hi * c - 1))
            s = 6 if (c * 64).is_integer() else 7
            if (b in (0, 31) or w <= 2.0 ** (1 - s)) and (best is None or w < best[1]):
                best = (c, w)
        out.append(best)
    return out


def cfloat(v):
    """v as a C float literal"""
    t = "%.9g" % v
    return t + (".0f" if "." not in t and "e" not in t else "f")


def fit(xs, target, weight, deg):
    v = np.vander(xs, deg + 1, increasing=True)
    return [float(f32(c)) for c in np.linalg.lstsq(v * weight[:, None], target * weight, rcond=None)[0]]


def main():
    bk = buckets()
    cs = [c for c, _ in bk]
    rmax = max(w for _, w in bk)
    grid = [round(-math.log2(c) * 2 ** 15) / 2 ** 15 for c in cs]
    rest = [float(f32(-math.log2(c) - g)) + 0.0 for c, g in zip(cs, grid)]
    rlo, rhi = min(min(c * (1 + b / 32) - 1, c * (1 + (b + 1) / 32) - 1) for b, c in enumerate(cs)), rmax
    amin = min(abs(e + g) for e in range(-150, 129) for g in grid if e + g != 0)
    # the fast two-sum of (e - log2 c) + r / ln2 holds: the first's exponent is at least the second's
    assert math.floor(math.log2(amin)) >= math.floor(math.log2(max(-rlo, rhi) / math.log(2)))
    l1 = 1 / math.log(2)
    r = np.cos(np.linspace(0, math.pi, 4001)) * (rhi - rlo) / 2 + (rhi + rlo) / 2
    r = r[np.abs(r) > 1e-7]
    q = fit(r, (np.log2(1 + r) - r * l1) / r ** 2, np.abs(r), 3)
    qerr = np.max(np.abs(r ** 2 * np.polyval(q[::-1], r) - (np.log2(1 + r) - r * l1)) / np.abs(r * l1))
    fb = 1 / 64 + 2 ** -12
    f = np.cos(np.linspace(0, math.pi, 4001)) * fb
    f = f[np.abs(f) > 1e-9]
    p = fit(f, (np.exp2(f) - 1) / f, np.ones_like(f), 2)
    perr = np.max(np.abs(f * np.polyval(p[::-1], f) - (np.exp2(f) - 1)) / np.exp2(f))
    e2 = [float(f32(2 ** (j / 32))) for j in range(32)]
    e2r = [float(f32(2 ** (j / 32) - h)) for j, h in enumerate(e2)]
    print("r in [%.6f, %.6f]; max |r| per bucket %s; min |e - log2 c| %.6f" % (rlo, rhi, ["%.4f" % w for _, w in bk], amin))
    print("Q (r^0..r^3) %s: relative error of log2(1 + r) 2^%.1f" % (q, math.log2(qerr)))
    print("2^f - 1 = f (p0 + p1 f + p2 f^2), p %s: relative error 2^%.1f" % (p, math.log2(perr)))
    for row in (cs, grid, rest, e2, e2r, [8.0] + [16.0] * 31):
        print("    {" + ", ".join(cfloat(v) for v in row) + "},")


if __name__ == "__main__":
    main()
