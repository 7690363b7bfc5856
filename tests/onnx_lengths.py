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
models lengths/refuse_*.onnx, which the loader must refuse. Needs numpy and
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


if __name__ == "__main__":
    main()
