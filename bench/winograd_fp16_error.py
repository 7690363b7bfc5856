#!/usr/bin/python3
"""How much accuracy Winograd F(4,3) loses in fp16 arithmetic, against direct fp16 convolution.

A numerical model of the kernels, not a run of them: every fp16 operation is computed in f32 and
rounded to fp16 (an FMA's product of two fp16 values is exact in f32, so this is the FMLA .8h
rounding). Operands are fp16-rounded post-ReLU activations and He-normal 3x3 weights; the
reference is f64 on the same fp16 operands. Printed: relative RMS error of the output for
  direct   the im2col GEMM over C*9 accumulating in fp16 (what the F16 kernels do),
  and F(4,3) with the transforms (input, weight, output) in fp16 and the 36 GEMMs accumulating
  in fp16 over all C, in fp16 over blocks of B channels with fp32 across blocks, or in fp32;
  and the engine's first form (luthier.h >>impl-conv-winograd16: f32 transforms, V and U rounded
  to fp16, blocks of 8 channels added in f32, M in f32).
Then the two-level fp16 sums (FMLA chains over blocks of 8 channels, the block sums added in
fp16 over groups of G blocks, the group sums added in f32), with fp16 transforms and in the
engine's form, for G = 1 (the form above), 2, 3, 4, 4 added pairwise (the kernel,
luthier_kernels_neon.h >>wino16) and 8, and plain blocks of 16 and 32 channels for comparison.
Usage: /usr/bin/python3 bench/winograd_fp16_error.py   (numpy only; about 30 s)
"""
import numpy as np

F16, F32, F64 = np.float16, np.float32, np.float64
BT = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
               [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], F64)
G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
              [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]], F64)
AT = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]], F64)


def gemm16(a, b):
    """a[..., m, k] @ b[..., k, n], the sum rounded to fp16 after every FMA."""
    acc = np.zeros(a.shape[:-1] + b.shape[-1:], F16)
    for k in range(a.shape[-1]):
        acc = (acc.astype(F32) + a[..., :, k:k + 1].astype(F32) * b[..., k:k + 1, :].astype(F32)).astype(F16)
    return acc


def gemm_blocks(block):
    """fp16 accumulation over `block` channels, fp32 across blocks (block 0: fp32 throughout)."""
    def gemm(a, b):
        if not block:
            return (a.astype(F32) @ b.astype(F32)).astype(F16)
        tot = np.zeros(a.shape[:-1] + b.shape[-1:], F32)
        for k0 in range(0, a.shape[-1], block):
            tot += gemm16(a[..., k0:k0 + block], b[..., k0:k0 + block, :]).astype(F32)
        return tot.astype(F16)
    return gemm


def gemm_groups(group, block=8, pairwise=False):
    """Two-level fp16: FMLA chains over `block` channels, those block sums added (fp16 FADD) into
    a group sum over `group` blocks, the group sums added in fp32. pairwise: a full group of 4
    added as (b0 + b1) + (b2 + b3) (luthier__wino16_4x16_neon), a partial one in order."""
    def gemm(a, b):
        h = lambda p, q: (p.astype(F32) + q.astype(F32)).astype(F16)
        tot = np.zeros(a.shape[:-1] + b.shape[-1:], F32)
        for g0 in range(0, a.shape[-1], block * group):
            bs = [gemm16(a[..., k0:k0 + block], b[..., k0:k0 + block, :])
                  for k0 in range(g0, min(g0 + block * group, a.shape[-1]), block)]
            if pairwise and len(bs) == 4:
                acc = h(h(bs[0], bs[1]), h(bs[2], bs[3]))
            else:
                acc = bs[0]
                for q in bs[1:]:
                    acc = h(acc, q)
            tot += acc.astype(F32)
        return tot
    return gemm


def transform16(m, x):
    """m @ x @ m.T over the last two axes, each output a chain of fp16 FMAs (zeros skipped)."""
    def left(x):
        out = np.zeros(x.shape[:-2] + (m.shape[0], x.shape[-1]), F16)
        for i in range(m.shape[0]):
            acc = np.zeros(x.shape[:-2] + (x.shape[-1],), F16)
            for k in np.nonzero(m[i])[0]:
                acc = (acc.astype(F32) + F32(F16(m[i, k])) * x[..., k, :].astype(F32)).astype(F16)
            out[..., i, :] = acc
        return out
    return np.swapaxes(left(np.swapaxes(left(x), -1, -2)), -1, -2)


def winograd(x, w, gemm):
    c, k, h = x.shape[0], w.shape[0], x.shape[1] - 2
    t = h // 4
    tiles = np.stack([x[:, 4 * a:4 * a + 6, 4 * b:4 * b + 6] for a in range(t) for b in range(t)], 1)
    v = np.transpose(transform16(BT, tiles), (2, 3, 0, 1)).reshape(36, c, t * t)
    u = np.transpose(transform16(G, w), (2, 3, 0, 1)).reshape(36, k, c)
    y = transform16(AT, np.transpose(gemm(u, v).reshape(6, 6, k, t * t), (2, 3, 0, 1)))
    return y.reshape(k, t, t, 4, 4).transpose(0, 1, 3, 2, 4).reshape(k, h, h).astype(F64)


def winograd_engine(x, w, gemm=None):
    """luthier's fp16 F(4,3) (>>impl-conv-winograd16): V = B^T d B in f32 rounded to fp16, U = G g G^T
    in f64 rounded to fp16, M = the products summed by `gemm` (default: fp16 sums over 8-channel
    blocks added in f32), M and Y = A^T M A in f32."""
    c, k, h = x.shape[0], w.shape[0], x.shape[1] - 2
    t = h // 4
    tiles = np.stack([x[:, 4 * a:4 * a + 6, 4 * b:4 * b + 6] for a in range(t) for b in range(t)], 1).astype(F32)
    v = np.transpose((BT.astype(F32) @ tiles @ BT.T.astype(F32)).astype(F16), (2, 3, 0, 1)).reshape(36, c, t * t)
    u = np.transpose((G @ w.astype(F64) @ G.T).astype(F16), (2, 3, 0, 1)).reshape(36, k, c)
    if gemm is None:
        m = np.zeros((36, k, t * t), F32)
        for k0 in range(0, c, 8):
            m += gemm16(u[..., k0:k0 + 8], v[..., k0:k0 + 8, :]).astype(F32)
    else:
        m = gemm(u, v).astype(F32)
    y = AT.astype(F32) @ np.transpose(m.reshape(6, 6, k, t * t), (2, 3, 0, 1)) @ AT.T.astype(F32)
    return y.reshape(k, t, t, 4, 4).transpose(0, 1, 3, 2, 4).reshape(k, h, h).astype(F64)


def layers():
    for c, k, h in ((64, 64, 56), (128, 128, 28), (256, 256, 12), (512, 64, 8)):
        r = np.random.default_rng(0)
        x = np.maximum(r.standard_normal((c, h + 2, h + 2)), 0).astype(F16)
        w = (r.standard_normal((k, c, 3, 3)) * np.sqrt(2 / (9 * c))).astype(F16)
        cols = np.stack([x[:, i:i + h, j:j + h] for i in range(3) for j in range(3)], 1).reshape(c * 9, h * h)
        ref = (w.astype(F64).reshape(k, c * 9) @ cols.astype(F64)).reshape(k, h, h)
        yield c, k, h, x, w, cols, lambda y, ref=ref: np.sqrt(((y - ref) ** 2).mean() / (ref ** 2).mean())


def main():
    print("layer (C, K, HxW) | direct fp16 | F(4,3): fp16 acc | blocks of 8 | 16 | 32 | fp32 acc | engine (f32 transforms, "
          "blocks of 8)  (relative RMS error)")
    for c, k, h, x, w, cols, err in layers():
        row = [err(gemm16(w.reshape(1, k, c * 9), cols[None])[0].astype(F64).reshape(k, h, h))]
        row += [err(winograd(x, w, g)) for g in (gemm16, gemm_blocks(8), gemm_blocks(16), gemm_blocks(32), gemm_blocks(0))]
        row += [err(winograd_engine(x, w))]
        print("%3d, %3d, %2dx%-2d | " % (c, k, h, h) + " | ".join("%.2e" % e for e in row))
    # the two-level form: (block, group) = (8, G) for G = 1 (today's form), 2, 4, 8, and plain
    # blocks of 16 and 32 (one FMLA chain per group) for comparison
    forms = ((8, 1, 0), (8, 2, 0), (8, 3, 0), (8, 4, 0), (8, 4, 1), (8, 8, 0), (16, 1, 0), (32, 1, 0))
    names = " | ".join(("G=%d%s" % (g, " pairwise (kernel)" if t else "")) if b == 8 else "blocks of %d" % b for b, g, t in forms)
    for title, run in (("fp16 transforms", lambda x, w, b, g, t: winograd(x, w, lambda u, v: gemm_groups(g, b, t)(u, v).astype(F16))),
                       ("engine (f32 transforms)", lambda x, w, b, g, t: winograd_engine(x, w, gemm_groups(g, b, t)))):
        print("two-level fp16 sums, %s: layer (C, K, HxW) | %s  (relative RMS error)" % (title, names))
        for c, k, h, x, w, cols, err in layers():
            print("%3d, %3d, %2dx%-2d | " % (c, k, h, h) + " | ".join("%.2e" % err(run(x, w, b, g, t)) for b, g, t in forms))


if __name__ == "__main__":
    main()
