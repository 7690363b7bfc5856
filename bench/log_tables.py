"""Table and polynomial of luthier's AVX-512 natural log (luthier__log_tab, luthier__v_log_tab in
luthier_ops.h). Run: /usr/bin/python3 bench/log_tables.py (numpy). The buckets are pow's
(pow_tables.buckets: c near 1/m, m c - 1 exact in float, c = 1 in the lowest bucket, 1/2 in the
highest; c is the first row of luthier__pow_tab). Prints the C rows (-ln c on a 2^-16 grid, its float rest), ln 2 as hi + lo, the fit
of log1p(r) = r + r^2 Q(r) and checks the conditions the C code relies on."""
import math
import numpy as np
from pow_tables import buckets, cfloat, fit

f32 = np.float32
GRID = 2.0 ** -16


def main():
    bk = buckets()
    cs = [c for c, _ in bk]
    ln2hi = round(math.log(2) / GRID) * GRID
    ln2lo = float(f32(math.log(2) - ln2hi))
    hi = [round(-math.log(c) / GRID) * GRID for c in cs]
    lo = [float(f32(-math.log(c) - h)) + 0.0 for c, h in zip(cs, hi)]
    # the top bucket (c = 1/2) with e = -1 cancels to exactly 0: x just below 1 keeps its precision
    assert hi[31] == ln2hi and lo[31] == ln2lo and hi[0] == 0 and lo[0] == 0
    # ln2hi has at most 16 significant bits: e ln2hi (|e| <= 149) and e ln2hi + hi exact in float
    assert (ln2hi / GRID).is_integer() and ln2hi / GRID < 2 ** 16 and 150 * 0.7 / GRID < 2 ** 24
    # per bucket: r = m c - 1 over m in [1 + b/32, 1 + (b + 1)/32); A = e ln2hi + hi for every e
    # is 0 or at least |r| (the fast two-sum A + r is exact)
    rlo = rhi = 0.0
    for b, c in enumerate(cs):
        r0, r1 = (1 + b / 32) * c - 1, (1 + (b + 1) / 32) * c - 1
        rlo, rhi = min(rlo, r0, r1), max(rhi, r0, r1)
        amin = min(abs(e * ln2hi + hi[b]) for e in range(-149, 129) if e * ln2hi + hi[b] != 0)
        assert amin >= max(abs(r0), abs(r1)), (b, amin)
    r = np.cos(np.linspace(0, math.pi, 8001)) * (rhi - rlo) / 2 + (rhi + rlo) / 2
    r = r[np.abs(r) > 1e-7]
    q = fit(r, (np.log1p(r) - r) / r ** 2, np.abs(r), 3)
    qerr = np.max(np.abs(r + r ** 2 * np.polyval(q[::-1], r) - np.log1p(r)) / np.abs(np.log1p(r)))
    print("r in [%.6f, %.6f]; ln2 = %s + %s" % (rlo, rhi, cfloat(ln2hi), cfloat(ln2lo)))
    print("Q (r^0..r^3) %s: relative error of log1p(r) 2^%.1f" % ([cfloat(v) for v in q], math.log2(qerr)))
    for row in (hi, lo):
        lines = [", ".join(cfloat(v) for v in row[i:i + 8]) for i in range(0, 32, 8)]
        print("    {" + ",\n     ".join(lines) + "},")


if __name__ == "__main__":
    main()
