#!/usr/bin/env python3
"""Writes the hostile ONNX models of tests/data/onnx/hostile (small files an attacker could
hand to luthier_onnx_load) and their MANIFEST: one line per file, "<file> <status> <words the
error message must contain>". tests/test_onnx.c loads each under ASan/UBSan in `make test` and
`make sanitize`: a load must fail with that status and message, never crash, hang or leak.
Needs the onnx Python package (Debian: python3-onnx). Run from the repository root:
    python3 tests/onnx_hostile.py
"""
import os
import onnx
from onnx import helper, TensorProto

OUT = os.path.join("tests", "data", "onnx", "hostile")
BIG = 1 << 31


def vi(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def const(name, values, dtype=TensorProto.FLOAT, dims=None):
    return helper.make_tensor(name, dtype, [len(values)] if dims is None else dims, values)


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "hostile", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="hostile")
    m.ir_version = 7
    return m


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0] if outs else op, **attrs)


CASES = []


def case(name, status, words, m):
    CASES.append((name, status, words, m))


# 1. an Add whose broadcast output has 2^62 elements: its byte size wrapped to 0 (heap overflow)
case("add_2p62.onnx", "OVERFLOW", "element count overflows",
     model([node("Add", ["a", "b"], ["y"])], [vi("a", [1, 1, BIG, 1]), vi("b", [1, 1, 1, BIG])], [vi("y", None)]))

# 2. the LayerNorm pattern with a ReduceMean of no input (NULL dereference in the matcher)
ln_tail = [node("Sub", ["x", "m"], ["d"]), node("Mul", ["d", "d"], ["sq"]),
           node("ReduceMean", ["sq"], ["v"], axes=[-1]), node("Add", ["v", "eps"], ["ve"]),
           node("Sqrt", ["ve"], ["s"]), node("Div", ["d", "s"], ["y"])]
eps = [const("eps", [1e-5], dims=[])]
case("layernorm_reducemean_no_input.onnx", "INVALID_ARGUMENT", "input 0 is missing",
     model([node("ReduceMean", [], ["m"], axes=[-1])] + ln_tail, [vi("x", [2, 8])], [vi("y", None)], eps))

# 3. the LayerNorm pattern whose square is a Mul of one input
tail3 = list(ln_tail)
tail3[1] = node("Mul", ["d"], ["sq"])
case("layernorm_mul_one_input.onnx", "INVALID_ARGUMENT", "input 1 is missing",
     model([node("ReduceMean", ["x"], ["m"], axes=[-1])] + tail3, [vi("x", [2, 8])], [vi("y", None)], eps))

# 4. the GELU pattern with an Erf of no input
gelu = [node("Div", ["x", "r2"], ["xd"]), node("Erf", [], ["e"]), node("Add", ["e", "one"], ["e1"]),
        node("Mul", ["x", "e1"], ["xe"]), node("Mul", ["xe", "half"], ["y"])]
ginit = [const("r2", [1.4142135623730951], dims=[]), const("one", [1.0], dims=[]), const("half", [0.5], dims=[])]
case("gelu_erf_no_input.onnx", "INVALID_ARGUMENT", "input 0 is missing",
     model(gelu, [vi("x", [2, 8])], [vi("y", None)], ginit))

# 5. the GELU pattern whose Div has one input
g5 = list(gelu)
g5[0] = node("Div", ["x"], ["xd"])
g5[1] = node("Erf", ["xd"], ["e"])
case("gelu_div_one_input.onnx", "INVALID_ARGUMENT", "input 1 is missing",
     model(g5, [vi("x", [2, 8])], [vi("y", None)], ginit))

# 6. a binary operator with one input (ran as the identity) and a unary one with two
case("add_one_input.onnx", "INVALID_ARGUMENT", "input 1 is missing",
     model([node("Add", ["x"], ["y"])], [vi("x", [2, 3])], [vi("y", None)]))
case("relu_two_inputs.onnx", "INVALID_ARGUMENT", "at most 1",
     model([node("Relu", ["x", "x"], ["y"])], [vi("x", [2, 3])], [vi("y", None)]))
case("conv_empty_weights_name.onnx", "INVALID_ARGUMENT", "input 1 is missing",
     model([node("Conv", ["x", ""], ["y"])], [vi("x", [1, 1, 4, 4])], [vi("y", None)]))

# 7. eight ConstantOfShape nodes of 2^26 floats each (2 GiB from a few hundred bytes)
shape = helper.make_tensor("shape", TensorProto.INT64, [1], [1 << 26])
cos = [node("ConstantOfShape", ["shape"], ["c%d" % i], value=const("v", [1.0], dims=[1])) for i in range(8)]
adds = [node("Add", ["c0", "c1"], ["s1"])] + [node("Add", ["s%d" % i, "c%d" % (i + 1)], ["s%d" % (i + 1)]) for i in range(1, 7)]
adds[-1].output[0] = "y"
case("constantofshape_x8.onnx", "OUT_OF_MEMORY", "memory budget",
     model(cos + adds, [], [vi("y", None)], [shape]))

# 8. shape arithmetic at the edge of int64: concatenation, reshape, split, pooling, LRN
HUGE = (1 << 60) - 1
case("concat_overflow.onnx", "UNSUPPORTED", "the concatenated axis 0 overflows",
     model([node("Concat", ["x"] * 9, ["y"], axis=0)], [vi("x", [HUGE])], [vi("y", None)]))
case("reshape_overflow.onnx", "INVALID_ARGUMENT", "target shape is too large",
     model([node("Reshape", ["x", "s"], ["y"])], [vi("x", [2, 3])], [vi("y", None)],
           [helper.make_tensor("s", TensorProto.INT64, [3], [1 << 62, 1 << 62, 4])]))
case("split_overflow.onnx", "UNSUPPORTED", "sizes must be",
     model([node("Split", ["x", "s"], ["y0", "y1", "y2"], axis=0)], [vi("x", [4])], [vi("y0", None)],
           [helper.make_tensor("s", TensorProto.INT64, [3], [(1 << 63) - 1, (1 << 63) - 1, 6])]))
case("maxpool_huge_kernel.onnx", "INVALID_ARGUMENT", "must be in [1, 2^30]",
     model([node("MaxPool", ["x"], ["y"], kernel_shape=[1 << 40, 1], pads=[(1 << 40) - 1, 0, 0, 0],
                 dilations=[1 << 23, 1])], [vi("x", [1, 1, 4, 4])], [vi("y", None)], opset=11))
case("lrn_huge_size.onnx", "UNSUPPORTED", "must be in [1, 2^31)",
     model([node("LRN", ["x"], ["y"], size=(1 << 62) + 1)], [vi("x", [1, 3, 4, 4])], [vi("y", None)]))


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = []
    for name, status, words, m in CASES:
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(m.SerializeToString())
        lines.append("%s %s %s" % (name, status, words))
    with open(os.path.join(OUT, "MANIFEST"), "w") as f:
        f.write("# file status words-of-the-message (written by tests/onnx_hostile.py)\n")
        f.write("\n".join(lines) + "\n")
    print("wrote %d models to %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
