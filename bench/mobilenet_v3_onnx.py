#!/usr/bin/env python3
"""Writes MobileNetV3-Large (torchvision's layer list, batch norm folded into the convolutions,
random weights) as an ONNX file, for `luthier-bench model FILE.onnx`: the network whose
hard_swish / hard_sigmoid layers follow convolutions. Plain Python, no packages: the protobuf
is encoded here (the few ONNX fields it needs).

    python3 bench/mobilenet_v3_onnx.py build/mobilenet_v3_large.onnx
"""
import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from onnx_proto import field, varint  # noqa: E402


def f_int(num, v):
    return field(num, 0, varint(v))


def f_bytes(num, b):
    return field(num, 2, varint(len(b)) + b)


def f_str(num, s):
    return f_bytes(num, s.encode())


def attr_int(name, v):
    return f_str(1, name) + f_int(20, 2) + f_int(3, v)


def attr_float(name, v):
    return f_str(1, name) + f_int(20, 1) + field(2, 5, struct.pack("<f", v))


def attr_ints(name, vs):
    return f_str(1, name) + f_int(20, 7) + b"".join(f_int(8, v) for v in vs)


class Graph:
    def __init__(self, seed):
        self.nodes, self.inits, self.count = [], [], 0
        self.rng = random.Random(seed)

    def name(self, prefix):
        self.count += 1
        return "%s_%d" % (prefix, self.count)

    def weight(self, dims, bound):
        n = math.prod(dims)
        name = self.name("w")
        data = struct.pack("<%df" % n, *(self.rng.uniform(-bound, bound) for _ in range(n)))
        t = b"".join(f_int(1, d) for d in dims) + f_int(2, 1) + f_str(8, name) + f_bytes(9, data)
        self.inits.append(t)
        return name

    def node(self, op, inputs, attrs=()):
        out = self.name(op.lower())
        n = b"".join(f_str(1, i) for i in inputs) + f_str(2, out) + f_str(3, out) + f_str(4, op)
        self.nodes.append(n + b"".join(f_bytes(5, a) for a in attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, groups=1):
        fan_in = cin // groups * k * k
        w = self.weight([cout, cin // groups, k, k], math.sqrt(6.0 / fan_in))
        b = self.weight([cout], 0.1)
        p = (k - 1) // 2
        return self.node("Conv", [x, w, b], [attr_ints("kernel_shape", [k, k]), attr_ints("strides", [stride, stride]),
                                             attr_ints("pads", [p, p, p, p]), attr_int("group", groups)])

    def act(self, x, kind):
        if kind == "RE":
            return self.node("Relu", [x])
        return self.node("HardSwish", [x])


def make_divisible(v, d=8):
    n = max(d, int(v + d / 2) // d * d)
    return n + d if n < 0.9 * v else n


# in, kernel, expanded, out, squeeze-excite, activation, stride (torchvision mobilenet_v3_large)
BLOCKS = [(16, 3, 16, 16, 0, "RE", 1), (16, 3, 64, 24, 0, "RE", 2), (24, 3, 72, 24, 0, "RE", 1),
          (24, 5, 72, 40, 1, "RE", 2), (40, 5, 120, 40, 1, "RE", 1), (40, 5, 120, 40, 1, "RE", 1),
          (40, 3, 240, 80, 0, "HS", 2), (80, 3, 200, 80, 0, "HS", 1), (80, 3, 184, 80, 0, "HS", 1),
          (80, 3, 184, 80, 0, "HS", 1), (80, 3, 480, 112, 1, "HS", 1), (112, 3, 672, 112, 1, "HS", 1),
          (112, 5, 672, 160, 1, "HS", 2), (160, 5, 960, 160, 1, "HS", 1), (160, 5, 960, 160, 1, "HS", 1)]


def squeeze_excite(g, x, c):
    sq = make_divisible(c // 4)
    s = g.node("GlobalAveragePool", [x])
    s = g.node("Relu", [g.conv(s, c, sq, 1)])
    s = g.node("HardSigmoid", [g.conv(s, sq, c, 1)], [attr_float("alpha", 1.0 / 6.0), attr_float("beta", 0.5)])
    return g.node("Mul", [x, s])


def gemm(g, x, k, n):
    w = g.weight([n, k], math.sqrt(6.0 / k))
    return g.node("Gemm", [x, w, g.weight([n], 0.1)], [attr_int("transB", 1)])


def mobilenet_v3_large(g, x):
    x = g.act(g.conv(x, 3, 16, 3, 2), "HS")
    for cin, k, exp, cout, se, act, stride in BLOCKS:
        y = x if exp == cin else g.act(g.conv(x, cin, exp, 1), act)
        y = g.act(g.conv(y, exp, exp, k, stride, exp), act)
        if se:
            y = squeeze_excite(g, y, exp)
        y = g.conv(y, exp, cout, 1)
        x = g.node("Add", [y, x]) if stride == 1 and cin == cout else y
    x = g.act(g.conv(x, 160, 960, 1), "HS")
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x])])
    x = g.act(gemm(g, x, 960, 1280), "HS")
    return gemm(g, x, 1280, 1000)


def value_info(name, dims):
    shape = b"".join(f_bytes(1, f_int(1, d)) for d in dims)
    return f_str(1, name) + f_bytes(2, f_bytes(1, f_int(1, 1) + f_bytes(2, shape)))


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "mobilenet_v3_large.onnx"
    g = Graph(2026)
    y = mobilenet_v3_large(g, "input")
    graph = (b"".join(f_bytes(1, n) for n in g.nodes) + f_str(2, "mobilenet_v3_large") +
             b"".join(f_bytes(5, t) for t in g.inits) + f_bytes(11, value_info("input", [1, 3, 224, 224])) +
             f_bytes(12, value_info(y, [1, 1000])))
    model = f_int(1, 8) + f_str(2, "luthier bench") + f_bytes(7, graph) + f_bytes(8, f_str(1, "") + f_int(2, 17))
    with open(path, "wb") as f:
        f.write(model)
    print("%s: %d nodes, %d weight tensors" % (path, len(g.nodes), len(g.inits)))


if __name__ == "__main__":
    main()
