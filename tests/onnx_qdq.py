#!/usr/bin/python3
"""Builds the small quantized ONNX models that tests/test_onnx.c loads with luthier_onnx.h, and
their reference outputs from an exact numpy implementation of the ONNX quantization operators.

Run on demand from the repository root with Debian's onnx (no onnxruntime is needed):

    /usr/bin/python3 tests/onnx_qdq.py          # apt-get install python3-onnx (numpy comes with it)

Writes, for each model NAME, tests/data/onnx/NAME.onnx and tests/data/onnx/NAME/:
    input_K.pb, output_K.pb   serialized TensorProtos (name = the graph input/output name,
                              raw_data): a fixed input and the reference outputs
    params.txt                the quantization parameters the loader must find, in the text
                              form of luthier_calibration_save ("<graph tensor> <scale> <zero
                              point>", uint8: an int8 zero point z is written as z + 128)
The outputs are committed, so the tests need no Python. Everything is deterministic (fixed seeds).

Reference semantics (ONNX operator specifications, opset 13):
    QuantizeLinear     y = saturate(round_half_to_even(x / y_scale) + y_zero_point), x / y_scale
                       in float32; uint8 saturates to [0, 255], int8 to [-128, 127]
    DequantizeLinear   y = (x - x_zero_point) * x_scale in float32; per axis: scale and zero point
                       along `axis`
    QLinearConv        acc = sum (x - x_zp) (w - w_zp) + B in integers (x padded with x_zp),
                       y = saturate(round_half_to_even(acc * x_scale * w_scale / y_scale) + y_zp)
                       (w_scale per output channel or per tensor)
    QLinearMatMul      acc = (a - a_zp) @ (b - b_zp), y = saturate(round(acc * a_s b_s / y_s) + y_zp)
    float operators between DequantizeLinear and QuantizeLinear (Conv, Relu, Add, MaxPool,
    GlobalAveragePool, Flatten, Gemm) are computed in float64 from the float32 operands and
    rounded to float32 once.

Models:
    qdq_cnn      QDQ format (as onnxruntime's QDQ quantizer writes it), [1,3,16,16]:
                 Q/DQ input (uint8) -> Conv 3x3 (weights int8 per channel via DQ axis 0, bias
                 int32 via DQ) -> Relu -> Q/DQ (uint8, zero point 0) -> Conv 3x3 stride 2 -> Q/DQ
                 (int8 activation) -> Conv 1x1 -> Q/DQ, Add of the two (residual) -> Q/DQ ->
                 MaxPool 2x2 -> Q/DQ (same parameters) -> GlobalAveragePool -> Q/DQ -> Flatten ->
                 Q/DQ -> Gemm (transB, int8 per channel weights, int32 bias via DQ) -> Q/DQ -> out
    qlinear      QOperator format, [1,4,8,8]: QuantizeLinear (uint8) -> QLinearConv 3x3 (int8
                 per channel weights, int32 bias, output zero point 0: the saturation at 0 is a
                 ReLU that the quantizer folded away) -> QLinearConv depthwise 3x3 stride 2
                 (group 8) -> DequantizeLinear -> output "feat"; and Reshape [8,16] of the
                 uint8 tensor -> QLinearMatMul (uint8 weights, per tensor, zero point != 0) ->
                 DequantizeLinear -> output "logits"
Weights that are int8 per channel are symmetric with max |q| = 127 per channel (what an int8
plan re-derives exactly); the QLinearMatMul's uint8 weights are not (an int8 plan re-quantizes
them per output channel, within one step of the model's). Activation parameters come from the
min/max of the quantized model's own values on the reference input (so nothing saturates
there except where the model means it to).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "onnx")
F32 = np.float32


# ---- quantization semantics ----------------------------------------------------------------------

def qrange(dtype):
    return (0, 255) if dtype == np.uint8 else (-128, 127)


def quantize(x, s, z, dtype, axis=None):
    """QuantizeLinear: x / s in float32, round half to even, + z, saturate."""
    x = np.asarray(x, F32)
    s = np.asarray(s, F32)
    z = np.asarray(z, np.int64)
    if axis is not None and s.ndim == 1:
        shape = [1] * x.ndim
        shape[axis] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    v = np.rint((x / s).astype(F32)).astype(np.int64) + z
    lo, hi = qrange(dtype)
    return np.clip(v, lo, hi).astype(dtype)


def dequantize(q, s, z, axis=None):
    """DequantizeLinear: (q - z) * s in float32."""
    q = np.asarray(q).astype(np.int64)
    s = np.asarray(s, F32)
    z = np.asarray(z, np.int64)
    if axis is not None and s.ndim == 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    return ((q - z).astype(F32) * s).astype(F32)


def requantize(acc, m, z, dtype):
    """int accumulator * real multiplier m (float64), round half to even, + z, saturate."""
    v = np.rint(acc.astype(np.float64) * m).astype(np.int64) + z
    lo, hi = qrange(dtype)
    return np.clip(v, lo, hi).astype(dtype)


def params_for(x, dtype):
    """Asymmetric min/max parameters (range widened to contain 0), as onnxruntime computes them."""
    lo, hi = float(min(0.0, x.min())), float(max(0.0, x.max()))
    qlo, qhi = qrange(dtype)
    s = F32((hi - lo) / (qhi - qlo)) if hi > lo else F32(1.0)
    z = int(np.clip(np.rint(qlo - lo / float(s)), qlo, qhi))
    return s, z


def weights_per_channel(w):
    """Symmetric int8 per output channel (axis 0) with max |q| = 127 in every channel."""
    s = (np.abs(w.reshape(w.shape[0], -1)).max(axis=1) / 127.0).astype(F32)
    q = quantize(w, s, np.zeros(w.shape[0], np.int64), np.int8, axis=0)
    assert (np.abs(q.reshape(w.shape[0], -1)).max(axis=1) == 127).all()
    return q, s


def bias_int32(b, s_in, s_w):
    s = (F32(s_in) * s_w).astype(F32)
    return np.rint(b.astype(np.float64) / s).astype(np.int32), s


# ---- float and integer operators -------------------------------------------------------------------

def conv2d(x, w, b=None, stride=1, pad=0, group=1):
    """NCHW convolution; integer inputs accumulate exactly (int64), float ones in float64."""
    integer = np.issubdtype(x.dtype, np.integer)
    acc = np.int64 if integer else np.float64
    x = x.astype(acc)
    w = w.astype(acc)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, ho, wo), acc)
    og = o // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = w[g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride * ho:stride, j:j + stride * wo:stride]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    if b is not None:
        out += np.asarray(b).astype(acc).reshape(1, -1, 1, 1)
    return out if integer else out.astype(F32)


def maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def gap(x):
    return x.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(F32)


# ---- model writing --------------------------------------------------------------------------------

class Builder:
    def __init__(self):
        self.nodes, self.inits, self.params = [], [], []

    def init(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, ins, outs, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=outs[0], **attrs))
        return outs[0]

    def qdq(self, x, s, z, dtype, expect=None):
        """Q/DQ of value x; the loader must put (s, z) on graph tensor `expect` (default x)."""
        zdt = np.uint8 if dtype == np.uint8 else np.int8
        sn = self.init(x + "_scale", F32(s))
        zn = self.init(x + "_zero_point", np.array(z, zdt))
        q = self.node("QuantizeLinear", [x, sn, zn], [x + "_quantized"])
        self.params.append((expect or x, s, z + (128 if dtype == np.int8 else 0)))
        return self.node("DequantizeLinear", [q, sn, zn], [x + "_dequantized"])

    def dq_weights(self, name, q, s, axis=0):
        z = np.zeros(np.shape(s), q.dtype)
        self.init(name + "_q", q)
        self.init(name + "_scale", np.asarray(s, F32))
        self.init(name + "_zero_point", z)
        attrs = {"axis": axis} if np.ndim(s) == 1 else {}
        return self.node("DequantizeLinear", [name + "_q", name + "_scale", name + "_zero_point"], [name], **attrs)

    def save(self, name, inputs, outputs, ins_data, outs_data):
        g = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in zip(inputs, ins_data)],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in zip(outputs, outs_data)],
            self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="luthier tests/onnx_qdq.py")
        m.ir_version = 7
        onnx.checker.check_model(m)
        path = os.path.join(OUT, name + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        for k, (n, a) in enumerate(zip(inputs, ins_data)):
            with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a, F32), n).SerializeToString())
        for k, (n, a) in enumerate(zip(outputs, outs_data)):
            with open(os.path.join(d, "output_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a, F32), n).SerializeToString())
        with open(os.path.join(d, "params.txt"), "w") as f:
            f.write("# %s: quantization parameters of graph tensors (written by tests/onnx_qdq.py)\n" % name)
            for t, s, z in self.params:
                f.write("%s %.17g %d\n" % (t, float(s), z))
        print("%-10s %6d bytes  %d nodes  outputs %s" % (name, os.path.getsize(path), len(self.nodes),
                                                         [tuple(a.shape) for a in outs_data]))


def steps(a, b, s):
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max() / float(s))


# ---- qdq_cnn --------------------------------------------------------------------------------------

def qdq_cnn():
    rng = np.random.default_rng(11)
    b = Builder()
    x = (rng.random((1, 3, 16, 16)) * 2 - 1).astype(F32)
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(F32)
    w2 = (rng.standard_normal((8, 8, 3, 3)) * 0.15).astype(F32)
    w3 = (rng.standard_normal((8, 8, 1, 1)) * 0.4).astype(F32)
    wf = (rng.standard_normal((10, 8)) * 0.5).astype(F32)
    b1, b2, b3, bf = [(rng.standard_normal(n) * 0.1).astype(F32) for n in (8, 8, 8, 10)]

    # reference, layer by layer; each activation's parameters from its own min/max
    def q_dq(v, dtype):
        s, z = params_for(v, dtype)
        return dequantize(quantize(v, s, z, dtype), s, z), s, z

    fp = {}  # the same graph unquantized (what an fp32 plan computes), for the report

    sx, zx = params_for(x, np.uint8)
    x_dq = dequantize(quantize(x, sx, zx, np.uint8), sx, zx)
    w1q, w1s = weights_per_channel(w1)
    b1q, b1s = bias_int32(b1, sx, w1s)
    w1d, b1d = dequantize(w1q, w1s, 0, 0), dequantize(b1q, b1s, 0, 0)
    r1 = np.maximum(conv2d(x_dq, w1d, b1d, pad=1), 0)
    fp["r1"] = np.maximum(conv2d(x, w1d, b1d, pad=1), 0)
    r1_dq, s1, z1 = q_dq(r1, np.uint8)
    assert z1 == 0
    w2q, w2s = weights_per_channel(w2)
    b2q, b2s = bias_int32(b2, s1, w2s)
    w2d, b2d = dequantize(w2q, w2s, 0, 0), dequantize(b2q, b2s, 0, 0)
    c2 = conv2d(r1_dq, w2d, b2d, stride=2, pad=1)
    fp["c2"] = conv2d(fp["r1"], w2d, b2d, stride=2, pad=1)
    c2_dq, s2, z2 = q_dq(c2, np.int8)
    w3q, w3s = weights_per_channel(w3)
    b3q, b3s = bias_int32(b3, s2, w3s)
    w3d, b3d = dequantize(w3q, w3s, 0, 0), dequantize(b3q, b3s, 0, 0)
    c3 = conv2d(c2_dq, w3d, b3d)
    fp["c3"] = conv2d(fp["c2"], w3d, b3d)
    c3_dq, s3, z3 = q_dq(c3, np.uint8)
    a = (c2_dq.astype(np.float64) + c3_dq).astype(F32)
    fp["a"] = (fp["c2"].astype(np.float64) + fp["c3"]).astype(F32)
    a_dq, s4, z4 = q_dq(a, np.uint8)
    m = maxpool2(a_dq)
    m_dq = dequantize(quantize(m, s4, z4, np.uint8), s4, z4)
    g = gap(m_dq)
    fp["g"] = gap(maxpool2(fp["a"]))
    g_dq, s5, z5 = q_dq(g, np.uint8)
    f = g_dq.reshape(1, 8)
    f_dq = dequantize(quantize(f, s5, z5, np.uint8), s5, z5)
    wfq, wfs = weights_per_channel(wf)
    bfq, bfs = bias_int32(bf, s5, wfs)
    wfd, bfd = dequantize(wfq, wfs, 0, 0), dequantize(bfq, bfs, 0, 0)
    lf = (f_dq.astype(np.float64) @ wfd.astype(np.float64).T + bfd).astype(F32)
    fp["lf"] = (fp["g"].reshape(1, 8).astype(np.float64) @ wfd.astype(np.float64).T + bfd).astype(F32)
    y, s6, z6 = q_dq(lf, np.uint8)

    # the model
    xd = b.qdq("x", sx, zx, np.uint8)
    b.dq_weights("w1", w1q, w1s)
    b.dq_weights("b1", b1q, b1s)
    b.node("Conv", [xd, "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    b.node("Relu", ["c1"], ["r1"])
    r1d = b.qdq("r1", s1, z1, np.uint8)
    b.dq_weights("w2", w2q, w2s)
    b.dq_weights("b2", b2q, b2s)
    b.node("Conv", [r1d, "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2])
    c2d = b.qdq("c2", s2, z2, np.int8)
    b.dq_weights("w3", w3q, w3s)
    b.dq_weights("b3", b3q, b3s)
    b.node("Conv", [c2d, "w3", "b3"], ["c3"])
    c3d = b.qdq("c3", s3, z3, np.uint8)
    b.node("Add", [c2d, c3d], ["a"])
    ad = b.qdq("a", s4, z4, np.uint8)
    b.node("MaxPool", [ad], ["m"], kernel_shape=[2, 2], strides=[2, 2])
    md = b.qdq("m", s4, z4, np.uint8)
    b.node("GlobalAveragePool", [md], ["g"])
    # the pooled values are all >= 0 here: zero point 0, the range starts at 0; ONNX clamps
    # negatives to 0 there, and nothing tells the loader that the average pool's output has none,
    # so it keeps the clamp as a clip node (named after the quantized value) that carries them
    assert z5 == 0
    gd = b.qdq("g", s5, z5, np.uint8, expect="g_quantized")
    b.node("Flatten", [gd], ["f"], axis=1)
    fd = b.qdq("f", s5, z5, np.uint8)
    b.dq_weights("wf", wfq, wfs)
    b.dq_weights("bf", bfq, bfs)
    b.node("Gemm", [fd, "wf", "bf"], ["lf"], transB=1)
    lfd = b.qdq("lf", s6, z6, np.uint8)
    b.node("Identity", [lfd], ["y"])
    b.save("qdq_cnn", ["x"], ["y"], [x], [y])
    print("           fp32 graph vs reference: %.2f output steps (output scale %.4g)" % (steps(fp["lf"], y, s6), s6))


# ---- qlinear --------------------------------------------------------------------------------------

def qlinear():
    rng = np.random.default_rng(12)
    b = Builder()
    x = (rng.random((1, 4, 8, 8)) * 2 - 1).astype(F32)
    w1 = (rng.standard_normal((8, 4, 3, 3)) * 0.25).astype(F32)
    w2 = (rng.standard_normal((8, 1, 3, 3)) * 0.5).astype(F32)
    wm = (rng.standard_normal((16, 10)) * 0.3 + 0.05).astype(F32)
    b1, b2 = [(rng.standard_normal(8) * 0.1).astype(F32) for _ in range(2)]

    sx, zx = params_for(x, np.uint8)
    xq = quantize(x, sx, zx, np.uint8)
    xr = dequantize(xq, sx, zx)
    # QLinearConv 1: output zero point 0 (its saturation is the ReLU)
    w1q, w1s = weights_per_channel(w1)
    b1q, b1s = bias_int32(b1, sx, w1s)
    c1 = conv2d(xr, dequantize(w1q, w1s, 0, 0), dequantize(b1q, b1s, 0, 0), pad=1)
    s1, z1 = params_for(np.maximum(c1, 0), np.uint8)
    assert z1 == 0
    acc1 = conv2d(xq.astype(np.int64) - zx, w1q.astype(np.int64), b1q, pad=1)
    m1 = (np.float64(sx) * w1s.astype(np.float64) / np.float64(s1)).reshape(1, -1, 1, 1)
    h1 = requantize(acc1, m1, z1, np.uint8)
    # QLinearConv 2: depthwise, stride 2
    w2q, w2s = weights_per_channel(w2)
    b2q, b2s = bias_int32(b2, s1, w2s)
    c2 = conv2d(dequantize(h1, s1, z1), dequantize(w2q, w2s, 0, 0), dequantize(b2q, b2s, 0, 0), stride=2, pad=1,
                group=8)
    s2, z2 = params_for(c2, np.uint8)
    acc2 = conv2d(h1.astype(np.int64) - z1, w2q.astype(np.int64), b2q, stride=2, pad=1, group=8)
    m2 = (np.float64(s1) * w2s.astype(np.float64) / np.float64(s2)).reshape(1, -1, 1, 1)
    h2 = requantize(acc2, m2, z2, np.uint8)
    feat = dequantize(h2, s2, z2)
    # QLinearMatMul: uint8 weights per tensor, zero point != 0
    sb, zb = params_for(wm, np.uint8)
    assert zb != 0
    bq = quantize(wm, sb, zb, np.uint8)
    a = h2.reshape(8, 16)
    mm = (dequantize(a, s2, z2).astype(np.float64) @ dequantize(bq, sb, zb).astype(np.float64)).astype(F32)
    s3, z3 = params_for(mm, np.uint8)
    acc3 = (a.astype(np.int64) - z2) @ (bq.astype(np.int64) - zb)
    yq = requantize(acc3, np.float64(s2) * np.float64(sb) / np.float64(s3), z3, np.uint8)
    logits = dequantize(yq, s3, z3)

    # what an fp32 plan of the loaded graph computes (unquantized, outputs clamped like the
    # QLinear ops saturate), for the report
    fc1 = np.clip(conv2d(x, dequantize(w1q, w1s, 0, 0), dequantize(b1q, (sx * w1s).astype(F32), 0, 0), pad=1),
                  s1 * (0 - z1), s1 * (255 - z1))
    fc2 = np.clip(conv2d(fc1, dequantize(w2q, w2s, 0, 0), dequantize(b2q, (s1 * w2s).astype(F32), 0, 0), stride=2,
                         pad=1, group=8), s2 * (0 - z2), s2 * (255 - z2))
    fmm = np.clip(fc2.reshape(8, 16).astype(np.float64) @ dequantize(bq, sb, zb), s3 * (0 - z3), s3 * (255 - z3))

    b.init("x_scale", F32(sx))
    b.init("x_zero_point", np.uint8(zx))
    b.node("QuantizeLinear", ["x", "x_scale", "x_zero_point"], ["xq"])
    b.params.append(("x", sx, zx))
    b.init("w1", w1q)
    b.init("w1_scale", w1s)
    b.init("w1_zero_point", np.zeros(8, np.int8))
    b.init("h1_scale", F32(s1))
    b.init("h1_zero_point", np.uint8(z1))
    b.init("b1", b1q)
    b.node("QLinearConv", ["xq", "x_scale", "x_zero_point", "w1", "w1_scale", "w1_zero_point", "h1_scale",
                           "h1_zero_point", "b1"], ["h1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    b.params.append(("h1", s1, z1))
    b.init("w2", w2q)
    b.init("w2_scale", w2s)
    b.init("w2_zero_point", np.zeros(8, np.int8))
    b.init("h2_scale", F32(s2))
    b.init("h2_zero_point", np.uint8(z2))
    b.init("b2", b2q)
    b.node("QLinearConv", ["h1", "h1_scale", "h1_zero_point", "w2", "w2_scale", "w2_zero_point", "h2_scale",
                           "h2_zero_point", "b2"], ["h2"], pads=[1, 1, 1, 1], strides=[2, 2], group=8)
    b.params.append(("h2", s2, z2))
    b.node("DequantizeLinear", ["h2", "h2_scale", "h2_zero_point"], ["feat"])
    b.init("flat_shape", np.array([8, 16], np.int64))
    b.node("Reshape", ["h2", "flat_shape"], ["h2_flat"])
    b.params.append(("h2_flat", s2, z2))
    b.init("wm", bq)
    b.init("wm_scale", F32(sb))
    b.init("wm_zero_point", np.uint8(zb))
    b.init("y_scale", F32(s3))
    b.init("y_zero_point", np.uint8(z3))
    b.node("QLinearMatMul", ["h2_flat", "h2_scale", "h2_zero_point", "wm", "wm_scale", "wm_zero_point", "y_scale",
                             "y_zero_point"], ["yq"])
    b.params.append(("yq", s3, z3))
    b.node("DequantizeLinear", ["yq", "y_scale", "y_zero_point"], ["logits"])
    # an int8 plan re-quantizes the dequantized weights symmetric per output channel (column)
    wr = dequantize(bq, sb, zb)
    sn = (np.abs(wr).max(axis=0) / F32(127)).astype(F32)
    acc8 = (a.astype(np.int64) - z2) @ np.rint(wr / sn).astype(np.int64)
    y8 = dequantize(requantize(acc8, np.float64(s2) * sn.astype(np.float64) / np.float64(s3), z3, np.uint8), s3, z3)
    b.save("qlinear", ["x"], ["feat", "logits"], [x], [feat, logits])
    print("           fp32 graph vs reference: feat %.2f steps (scale %.4g), logits %.2f steps (scale %.4g)"
          % (steps(fc2, feat, s2), s2, steps(fmm, logits, s3), s3))
    print("           logits with the uint8 weights re-quantized int8 per column: %.2f steps" % steps(y8, logits, s3))


# ---- self-check against ONNX's own node tests ---------------------------------------------------------

def self_check():
    """The reference operators above against the expected outputs of ONNX's node tests
    (Debian's libonnx-testdata), when installed: they must agree exactly."""
    root = "/usr/share/libonnx-testdata/data/node"
    if not os.path.isdir(root):
        print("self-check skipped: no %s (apt-get install libonnx-testdata)" % root)
        return
    def load(t):
        d = os.path.join(root, t, "test_data_set_0")
        ins = [numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "input_%d.pb" % k))) for k in range(9)
               if os.path.exists(os.path.join(d, "input_%d.pb" % k))]
        return ins, numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "output_0.pb")))
    (x, s, z), y = load("test_quantizelinear")
    assert (quantize(x, s, z, y.dtype) == y).all()
    (x, s, z), y = load("test_quantizelinear_axis")
    assert (quantize(x, s, z, y.dtype, axis=1) == y).all()
    (x, s, z), y = load("test_dequantizelinear")
    assert (dequantize(x, s, z) == y).all()
    (x, s, z), y = load("test_dequantizelinear_axis")
    assert (dequantize(x, s, z, axis=1) == y).all()
    (x, xs, xz, w, ws, wz, ys, yz), y = load("test_qlinearconv")
    acc = conv2d(x.astype(np.int64) - xz, w.astype(np.int64) - wz.reshape(-1, 1, 1, 1))
    m = (np.float64(xs) * ws.astype(np.float64) / np.float64(ys)).reshape(1, -1, 1, 1)
    assert (requantize(acc, m, int(yz), y.dtype) == y).all()
    for t in ("test_qlinearmatmul_2D", "test_qlinearmatmul_3D"):
        (a, as_, az, b, bs, bz, ys, yz), y = load(t)
        acc = np.matmul(a.astype(np.int64) - az.astype(np.int64), b.astype(np.int64) - bz.astype(np.int64))
        m = np.float64(as_[0]) * np.float64(bs[0]) / np.float64(ys[0])
        assert (requantize(acc, m, int(yz[0]), y.dtype) == y).all(), t
    print("self-check: the reference operators reproduce ONNX's node tests (quantizelinear[_axis], "
          "dequantizelinear[_axis], qlinearconv, qlinearmatmul_2D/3D)")


def main():
    os.makedirs(OUT, exist_ok=True)
    self_check()
    qdq_cnn()
    qlinear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
