#!/usr/bin/env python3
"""Writes tests/data/onnx/lengths.onnx, a detection post-processing chain whose intermediate
lengths depend on the data (as torchvision's SSD/RetinaNet postprocess_detections exports it),
and its test data sets tests/data/onnx/lengths/test_data_set_S/{input,output}_K.pb, with the
outputs computed by a numpy reference written from the ONNX operator definitions.

    scores > 0.3 -> NonZero -> Transpose -> GatherND (scores, boxes)
    k = ReduceMin(Concat([5], Unsqueeze(Gather(Shape(kept scores), 0))))   # min(5, n)
    TopK(kept scores, k) -> Gather (boxes) -> NonMaxSuppression (iou 0.5) -> Gather column 2
    -> Squeeze -> Slice [0:4] -> Gather (boxes, scores)

The sets keep 12, 3, 1 and 0 of the 16 boxes. tests/test_lengths.c runs them, and loads the
models lengths/refuse_*.onnx, which the loader must refuse. With them: lengths/if_nms*.onnx,
torchvision's batched_nms under its `if boxes.numel() == 0` (sets if_set_S: 0, 1, 12 and 16
boxes kept), lengths/if_const.onnx (conditions that fold, nested; set if_const_set) and the
refusals lengths/if_*.onnx (if_main). Needs numpy and
the onnx package (Debian: python3-numpy python3-onnx). From the repository root:
    python3 tests/onnx_lengths.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join("tests", "data", "onnx")
N, K, THR, IOU, KEEP = 16, 5, 0.3, 0.5, 4


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=outs[0], **attrs)


def model():
    i64 = lambda name, vals, dims: helper.make_tensor(name, TensorProto.INT64, dims, vals)
    inits = [helper.make_tensor("thr", TensorProto.FLOAT, [], [THR]), i64("zero", [0], []), i64("ax0", [0], [1]),
             i64("ax01", [0, 1], [2]), i64("ax1", [1], [1]), i64("kmax", [K], [1]), i64("one", [1], [1]),
             i64("col", [2], [1]), i64("max_out", [100], [1]), helper.make_tensor("iou", TensorProto.FLOAT, [1], [IOU]),
             i64("s0", [0], [1]), i64("e4", [KEEP], [1])]
    nodes = [
        node("Greater", ["scores", "thr"], ["mask"]),
        node("NonZero", ["mask"], ["nz"]),
        node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
        node("GatherND", ["scores", "idx"], ["s"]),
        node("GatherND", ["boxes", "idx"], ["b"]),
        node("Shape", ["s"], ["sh"]),
        node("Gather", ["sh", "zero"], ["num"], axis=0),
        node("Unsqueeze", ["num", "ax0"], ["num1"]),
        node("Concat", ["kmax", "num1"], ["kk"], axis=0),
        node("ReduceMin", ["kk"], ["kmin"], keepdims=0),
        node("Reshape", ["kmin", "one"], ["k"]),
        node("TopK", ["s", "k"], ["v", "i"], axis=-1, largest=1, sorted=1),
        node("Gather", ["b", "i"], ["bb"], axis=0),
        node("Unsqueeze", ["bb", "ax0"], ["b3"]),
        node("Unsqueeze", ["v", "ax01"], ["s3"]),
        node("NonMaxSuppression", ["b3", "s3", "max_out", "iou"], ["sel"]),
        node("Gather", ["sel", "col"], ["c"], axis=1),
        node("Squeeze", ["c", "ax1"], ["keep_all"]),
        node("Slice", ["keep_all", "s0", "e4", "ax0"], ["keep"]),
        node("Gather", ["bb", "keep"], ["out_boxes"], axis=0),
        node("Gather", ["v", "keep"], ["out_scores"], axis=0),
    ]
    g = helper.make_graph(nodes, "lengths", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [N, 4]),
                                            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [N])],
                          [helper.make_tensor_value_info("out_boxes", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("out_scores", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("keep", TensorProto.INT64, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx_lengths.py")
    m.ir_version = 8
    return m


def iou_over(b1, b2, thr):
    """NonMaxSuppression's suppression test (center_point_box 0: corners in either order)."""
    y1a, y1b = sorted((b1[0], b1[2]))
    x1a, x1b = sorted((b1[1], b1[3]))
    y2a, y2b = sorted((b2[0], b2[2]))
    x2a, x2b = sorted((b2[1], b2[3]))
    iw, ih = min(x1b, x2b) - max(x1a, x2a), min(y1b, y2b) - max(y1a, y2a)
    if iw <= 0 or ih <= 0:
        return False
    inter = iw * ih
    union = (x1b - x1a) * (y1b - y1a) + (x2b - x2a) * (y2b - y2a) - inter
    return union > 0 and inter / union > thr


def reference(boxes, scores):
    """The graph by hand: each step as the ONNX operator defines it."""
    nz = np.stack(np.nonzero(scores > np.float32(THR)))          # NonZero: [rank, n]
    idx = nz.T                                                    # Transpose
    s, b = scores[idx[:, 0]], boxes[idx[:, 0]]                    # GatherND
    k = min(K, s.shape[0])                                        # Shape, Gather, Concat, ReduceMin
    order = np.argsort(-s, kind="stable")[:k]                     # TopK: largest first, lower index on ties
    v, bb = s[order], b[order]
    sel = []                                                      # NonMaxSuppression, one batch and class
    for j in np.argsort(-v, kind="stable"):
        if all(not iou_over(bb[j], bb[q], IOU) for q in sel):
            sel.append(j)
    keep = np.array(sel[:KEEP], dtype=np.int64)                   # Gather column 2, Squeeze, Slice [0:4]
    return bb[keep].reshape(-1, 4).astype(np.float32), v[keep].astype(np.float32), keep


def inputs(count, rng):
    boxes = np.zeros((N, 4), np.float32)
    for e in range(N):  # clusters of overlapping boxes, corners in either order
        y, x = rng.integers(0, 3) * 0.3 + rng.random() * 0.1, rng.integers(0, 3) * 0.3 + rng.random() * 0.1
        h, w = 0.2 + rng.random() * 0.1, 0.2 + rng.random() * 0.1
        boxes[e] = [y, x, y + h, x + w] if e % 3 else [y + h, x + w, y, x]
    scores = (rng.random(N) * 0.25).astype(np.float32)           # below the threshold
    above = rng.permutation(N)[:count]
    scores[above] = (0.35 + rng.random(count) * 0.6).astype(np.float32)
    return boxes, scores


def refusals():
    """Models that read a run-time length where the loader cannot follow it (tests/test_lengths.c
    checks each load fails with UNSUPPORTED and a message naming the node)."""
    base = [node("Greater", ["scores", "thr"], ["mask"]), node("NonZero", ["mask"], ["nz"]),
            node("Transpose", ["nz"], ["idx"], perm=[1, 0]), node("GatherND", ["scores", "idx"], ["s"]),
            node("Shape", ["s"], ["sh"])]
    inits = [helper.make_tensor("thr", TensorProto.FLOAT, [], [THR]),
             helper.make_tensor("kmax", TensorProto.INT64, [1], [K]),
             helper.make_tensor("s0", TensorProto.INT64, [1], [0]), helper.make_tensor("em1", TensorProto.INT64, [1], [-1])]
    cases = {
        "refuse_cast": [node("Cast", ["sh"], ["y"], to=1)],                                    # a length as data
        "refuse_size": [node("Size", ["s"], ["y"])],                                           # n * 1: not min(c, n)
        "refuse_slice": [node("Slice", ["s", "s0", "em1"], ["y"])],                            # [:-1] counts from the end
        "refuse_topk": [node("Concat", ["kmax", "sh"], ["kk"], axis=0), node("ReduceMin", ["kk"], ["k"], keepdims=1),
                        node("TopK", ["scores", "k"], ["y", "yi"])],                           # K from another length
    }
    for name, tail in cases.items():
        g = helper.make_graph(base + tail, name, [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [N])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx_lengths.py")
        m.ir_version = 8
        onnx.save(m, os.path.join(OUT, "lengths", name + ".onnx"))


def main():
    rng = np.random.default_rng(23)
    os.makedirs(os.path.join(OUT, "lengths"), exist_ok=True)
    onnx.save(model(), os.path.join(OUT, "lengths.onnx"))
    refusals()
    for si, count in enumerate((12, 3, 1, 0)):
        d = os.path.join(OUT, "lengths", "test_data_set_%d" % si)
        os.makedirs(d, exist_ok=True)
        boxes, scores = inputs(count, rng)
        outs = reference(boxes, scores)
        for k, (name, arr) in enumerate((("boxes", boxes), ("scores", scores))):
            with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())
        for k, (name, arr) in enumerate(zip(("out_boxes", "out_scores", "keep"), outs)):
            with open(os.path.join(d, "output_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(arr, name).SerializeToString())
        print("set %d: %d kept, %d after nms" % (si, count, outs[2].shape[0]))
    if_main()


# ---- If: batched NMS under torchvision's `if boxes.numel() == 0` ------------------------------
IF_N, IF_KEEP, IF_SCALE = 16, 10, [2.0, 0.5, 2.0, 0.5]


def if_model(spelling):
    """boxes [16,4], scores [16], labels [16] -> keep scores > 0.3 (NonZero, GatherND; labels Cast to int64) ->
    If numel(kept boxes) == 0 (spelling "prod": Shape, ReduceProd, Equal, Cast to bool, as torch
    exports it; "size": Size, Equal with 0 first) then an empty int64 [0], else batched NMS as
    torchvision's batched_nms: offsets = labels * (max coordinate + 1), NMS of the offset boxes,
    column 2 -> Slice [0:10] -> Gather boxes (scaled per coordinate), scores, labels."""
    i64 = lambda name, vals, dims: helper.make_tensor(name, TensorProto.INT64, dims, vals)
    inits = [helper.make_tensor("thr", TensorProto.FLOAT, [], [THR]), i64("zero", [0], []), i64("ax0", [0], [1]),
             i64("ax1", [1], [1]), i64("s0", [0], [1]), i64("ekeep", [IF_KEEP], [1]), i64("step", [1], [1]),
             helper.make_tensor("scale", TensorProto.FLOAT, [4], IF_SCALE)]
    then_b = helper.make_graph([helper.make_node("Constant", [], ["empty"], value=i64("ev", [], [0]))], "then", [],
                               [helper.make_tensor_value_info("empty", TensorProto.INT64, [0])])
    else_b = helper.make_graph([
        node("ReduceMax", ["b"], ["maxc"], keepdims=0),
        node("Cast", ["l"], ["lf"], to=1),
        node("Constant", [], ["one"], value=helper.make_tensor("onev", TensorProto.FLOAT, [], [1.0])),
        node("Add", ["maxc", "one"], ["maxc1"]),
        node("Mul", ["lf", "maxc1"], ["offsets"]),
        node("Unsqueeze", ["offsets", "ax1"], ["off2"]),
        node("Add", ["b", "off2"], ["bfn"]),
        node("Unsqueeze", ["bfn", "ax0"], ["b3"]),
        node("Unsqueeze", ["s", "ax0"], ["s2"]),
        node("Unsqueeze", ["s2", "ax0"], ["s3"]),
        node("Constant", [], ["maxout"], value=i64("mv", [2 ** 63 - 1], [1])),
        node("Constant", [], ["iou"], value=helper.make_tensor("iouv", TensorProto.FLOAT, [1], [IOU])),
        node("NonMaxSuppression", ["b3", "s3", "maxout", "iou"], ["sel"]),
        node("Constant", [], ["col"], value=i64("colv", [2], [1])),
        node("Gather", ["sel", "col"], ["selc"], axis=1),
        node("Squeeze", ["selc", "ax1"], ["keep_all"]),
    ], "else", [], [helper.make_tensor_value_info("keep_all", TensorProto.INT64, None)])
    if spelling == "prod":
        cond = [node("Shape", ["b"], ["sh"]), node("ReduceProd", ["sh"], ["numel"], keepdims=0),
                node("Equal", ["numel", "zero"], ["eq"]), node("Cast", ["eq"], ["cond"], to=9)]
    else:
        cond = [node("Size", ["b"], ["numel"]), node("Equal", ["zero", "numel"], ["cond"])]
    nodes = [node("Greater", ["scores", "thr"], ["mask"]), node("NonZero", ["mask"], ["nz"]),
             node("Transpose", ["nz"], ["idx"], perm=[1, 0]), node("GatherND", ["scores", "idx"], ["s"]),
             node("GatherND", ["boxes", "idx"], ["b"]), node("GatherND", ["labels", "idx"], ["lk"]), node("Cast", ["lk"], ["l"], to=7)] + cond + [
        helper.make_node("If", ["cond"], ["keep_if"], name="batched_nms_if", then_branch=then_b, else_branch=else_b),
        node("Slice", ["keep_if", "s0", "ekeep", "ax0", "step"], ["keep"]),
        node("Gather", ["b", "keep"], ["kb"], axis=0),
        node("Mul", ["kb", "scale"], ["out_boxes"]),
        node("Gather", ["s", "keep"], ["out_scores"], axis=0),
        node("Gather", ["l", "keep"], ["out_labels"], axis=0),
    ]
    g = helper.make_graph(nodes, "lengths_if", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [IF_N, 4]),
                                               helper.make_tensor_value_info("scores", TensorProto.FLOAT, [IF_N]),
                                               helper.make_tensor_value_info("labels", TensorProto.FLOAT, [IF_N])],
                          [helper.make_tensor_value_info(n, t, None) for n, t in (
                              ("out_boxes", TensorProto.FLOAT), ("out_scores", TensorProto.FLOAT),
                              ("out_labels", TensorProto.INT64), ("keep", TensorProto.INT64))], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx_lengths.py")
    m.ir_version = 8
    return m


def if_reference(boxes, scores, labels):
    """The If model by hand from the ONNX definitions (ReduceMax of the kept boxes: the
    else-branch runs only when some are kept)."""
    sel = np.nonzero(scores > np.float32(THR))[0]
    s, b, l = scores[sel], boxes[sel], labels[sel].astype(np.int64)
    if b.size == 0:
        keep = np.zeros(0, np.int64)
    else:
        off = l.astype(np.float32) * (b.max() + np.float32(1))
        bfn = (b + off[:, None]).astype(np.float32)
        keep_all = []
        for j in np.argsort(-s, kind="stable"):
            if all(not iou_over(bfn[j], bfn[q], IOU) for q in keep_all):
                keep_all.append(j)
        keep = np.array(keep_all[:IF_KEEP], dtype=np.int64)
    return ((b[keep] * np.array(IF_SCALE, np.float32)).reshape(-1, 4).astype(np.float32), s[keep].astype(np.float32),
            l[keep].astype(np.int64), keep)


def if_const_model():
    """Ifs whose conditions fold at load time, reading outer values: A on Shape(x)[0] > 3
    (true: xo = x + one, a node listed after A that only A's then_branch reads), B on a constant false whose else_branch holds If C on Shape(x)[0] == 4 (true:
    x * two, an initializer of C's then_branch), D on A's condition whose then_branch is only
    its output, the outer x. ya = x + 1, yb = 2 x, yd = x."""
    f = lambda name, vals, dims: helper.make_tensor(name, TensorProto.FLOAT, dims, vals)
    i64 = lambda name, vals, dims: helper.make_tensor(name, TensorProto.INT64, dims, vals)
    out = lambda name: [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)]
    a_then = helper.make_graph([node("Identity", ["xo"], ["ya_t"])], "a_then", [], out("ya_t"))
    a_else = helper.make_graph([node("Sub", ["x", "one"], ["ya_e"])], "a_else", [], out("ya_e"))
    c_then = helper.make_graph([node("Mul", ["x", "two"], ["yc_t"])], "c_then", [], out("yc_t"), initializer=[f("two", [2.0], [])])
    c_else = helper.make_graph([node("Identity", ["x"], ["yc_e"])], "c_else", [], out("yc_e"))
    b_then = helper.make_graph([node("Neg", ["x"], ["yb_t"])], "b_then", [], out("yb_t"))
    b_else = helper.make_graph([node("Shape", ["x"], ["sh_c"]), node("Gather", ["sh_c", "zero"], ["n_c"], axis=0),
                                node("Equal", ["n_c", "four"], ["cond_c"]),
                                helper.make_node("If", ["cond_c"], ["yb_e"], name="if_c", then_branch=c_then, else_branch=c_else)],
                               "b_else", [], out("yb_e"))
    nodes = [node("Shape", ["x"], ["sh"]), node("Gather", ["sh", "zero"], ["n"], axis=0), node("Greater", ["n", "three"], ["cond_a"]),
             helper.make_node("If", ["cond_a"], ["ya"], name="if_a", then_branch=a_then, else_branch=a_else),
             helper.make_node("If", ["no"], ["yb"], name="if_b", then_branch=b_then, else_branch=b_else),
             helper.make_node("If", ["cond_a"], ["yd"], name="if_d", then_branch=helper.make_graph([], "d_then", [], out("x")),
                              else_branch=helper.make_graph([node("Neg", ["x"], ["yd_e"])], "d_else", [], out("yd_e"))),
             node("Add", ["x", "one"], ["xo"])]  # read only by A's then_branch, listed after A
    g = helper.make_graph(nodes, "if_const", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          out("ya") + out("yb") + out("yd"),
                          initializer=[f("one", [1.0], []), i64("zero", [0], []), i64("three", [3], []), i64("four", [4], []),
                                       helper.make_tensor("no", TensorProto.BOOL, [], [False])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx_lengths.py")
    m.ir_version = 8
    return m


def if_refusals():
    """Models with an If the loader must refuse, each with a message naming the problem
    (tests/test_lengths.c): a condition known only at run time; a missing branch; a branch with
    the wrong number of outputs; subgraphs nested 40 deep; numel(X) == 0 with a then_branch that
    is not empty; a branch that redefines an outer value; a branch reading a name nothing defines."""
    out = lambda name: [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)]
    ident = lambda name: helper.make_graph([node("Identity", ["x"], [name])], "b_" + name, [], out(name))
    inits = [helper.make_tensor("zf", TensorProto.FLOAT, [], [0.0]), helper.make_tensor("thr", TensorProto.FLOAT, [], [THR]),
             helper.make_tensor("zero", TensorProto.INT64, [], [0]), helper.make_tensor("yes", TensorProto.BOOL, [], [True])]
    two_out = helper.make_graph([node("Identity", ["x"], ["t1"]), node("Identity", ["x"], ["t2"])], "two", [], out("t1") + out("t2"))
    deep = ident("d0")
    for k in range(40):
        deep = helper.make_graph([helper.make_node("If", ["yes"], ["d%d" % (k + 1)], then_branch=deep, else_branch=ident("e%d" % k))],
                                 "deep%d" % k, [], out("d%d" % (k + 1)))
    nz = [node("Greater", ["x", "thr"], ["mask"]), node("NonZero", ["mask"], ["nz"]), node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
          node("GatherND", ["x", "idx"], ["s"]), node("Size", ["s"], ["numel"]), node("Equal", ["numel", "zero"], ["empty"])]
    ifn = lambda cond, **br: helper.make_node("If", [cond], ["y"], name="the_if", **br)
    cases = {
        "if_runtime": [node("ReduceSum", ["x"], ["sum"], keepdims=0), node("Greater", ["sum", "zf"], ["pos"]),
                       ifn("pos", then_branch=ident("a"), else_branch=ident("b"))],
        "if_no_else": [ifn("yes", then_branch=ident("a"))],
        "if_outputs": [ifn("yes", then_branch=two_out, else_branch=ident("b"))],
        "if_deep": [ifn("yes", then_branch=deep, else_branch=ident("b"))],
        "if_numel_then": nz + [ifn("empty", then_branch=ident("a"), else_branch=helper.make_graph(
            [node("Identity", ["s"], ["b"])], "e", [], out("b")))],
        "if_shadow": [node("Identity", ["x"], ["taken"]), ifn("yes", then_branch=ident("taken"), else_branch=ident("b"))],
        "if_dangling": [ifn("yes", then_branch=helper.make_graph([node("Identity", ["nowhere"], ["a"])], "t", [], out("a")),
                            else_branch=ident("b"))],
    }
    for name, nodes in cases.items():
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N])], out("y"), initializer=inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnx_lengths.py")
        m.ir_version = 8
        onnx.save(m, os.path.join(OUT, "lengths", name + ".onnx"))


def if_inputs(count, rng):
    """16 boxes in overlapping clusters with labels 1 and 2; count of them score above 0.3."""
    boxes, scores = inputs(count, rng)
    labels = rng.integers(1, 3, IF_N).astype(np.float32)
    return boxes * np.float32(100), scores, labels


def save_set(d, ins, outs):
    os.makedirs(d, exist_ok=True)
    for k, (name, arr) in enumerate(ins):
        with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    for k, (name, arr) in enumerate(outs):
        with open(os.path.join(d, "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())


def if_main():
    rng = np.random.default_rng(29)
    onnx.save(if_model("prod"), os.path.join(OUT, "lengths", "if_nms.onnx"))
    onnx.save(if_model("size"), os.path.join(OUT, "lengths", "if_nms_size.onnx"))
    onnx.save(if_const_model(), os.path.join(OUT, "lengths", "if_const.onnx"))
    if_refusals()
    for si, count in enumerate((0, 1, 12, 16)):
        boxes, scores, labels = if_inputs(count, rng)
        outs = if_reference(boxes, scores, labels)
        save_set(os.path.join(OUT, "lengths", "if_set_%d" % si), (("boxes", boxes), ("scores", scores), ("labels", labels)),
                 zip(("out_boxes", "out_scores", "out_labels", "keep"), outs))
        print("if set %d: %d kept, %d after nms" % (si, count, outs[3].shape[0]))
    x = np.array([0.5, -1.25, 3.0, 0.0], np.float32)
    save_set(os.path.join(OUT, "lengths", "if_const_set"), (("x", x),), (("ya", x + 1), ("yb", x * 2), ("yd", x)))


if __name__ == "__main__":
    main()
