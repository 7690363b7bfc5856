#!/usr/bin/python3
"""ssdlite320_mobilenet_v3_large through luthier up to its NMS (issue #23), against torchvision.

Run on demand from the repository root with Debian's torch, torchvision and onnx:

    cc -std=c99 -O2 -I. tests/ssdlite_check.c -o build/ssdlite_check -lpthread -lm
    /usr/bin/python3 tests/ssdlite_check.py [--out build/ssdlite] [--threads 2]

Weights: weights=None with torch.manual_seed(0), then re-drawn so that scores spread (the
default init gives every class 1/91 everywhere): convolutions He-normal, biases N(0, 0.1),
BatchNorm affine U(0.5, 1.5) / N(0, 0.1), statistics N(0, 0.1) / U(0.5, 1.5), the
classification head's class convolutions scaled by 0.3; score_thresh 0.05 (torchvision's 0.001
keeps every candidate of every class: 300 of each). Exported at opset 17 for one 3x320x320 image.

luthier stops at the `If` of batched_nms (boxes.numel() == 0), so the model's outputs are
replaced by the per-class candidates it concatenates before NMS (boxes, scores, labels) and the
two tensors they come from (decoded boxes, softmax scores). For each fixed-seed image the script
prints: the candidate count of luthier and of torchvision's postprocess_detections loop run on
luthier's own scores and boxes (identical expected: the loop only selects), the largest
differences there, and the largest difference of luthier's softmax scores from PyTorch's (the
network's own rounding, which moves candidates across score_thresh: the end-to-end candidate
counts can then differ by a few).
"""
import argparse
import os
import subprocess

import numpy as np
import onnx
import torch
import torchvision

THRESH, CAND = 0.05, ["/Concat_93_output_0", "/Concat_94_output_0", "/Concat_95_output_0", "/Reshape_output_0",
                      "/Squeeze_1_output_0"]


def network():
    torch.manual_seed(0)
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None).eval()
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.Conv2d):
                mod.weight.normal_(0, (2.0 / mod.weight[0].numel()) ** 0.5)
                if mod.bias is not None:
                    mod.bias.normal_(0, 0.1)
            elif isinstance(mod, torch.nn.BatchNorm2d):
                mod.weight.uniform_(0.5, 1.5), mod.bias.normal_(0, 0.1)
                mod.running_mean.normal_(0, 0.1), mod.running_var.uniform_(0.5, 1.5)
        for conv in m.head.classification_head.modules():
            if isinstance(conv, torch.nn.Conv2d) and conv.out_channels % 91 == 0:
                conv.weight.mul_(0.3)
    m.score_thresh = THRESH
    return m


def candidates(boxes, scores):
    """torchvision's SSD.postprocess_detections per-class loop, up to batched_nms."""
    b, s, l = [], [], []
    for label in range(1, scores.shape[1]):
        score = scores[:, label]
        keep = score > THRESH
        score, box = score[keep], boxes[keep]
        score, idx = score.topk(min(300, score.size(0)))
        b.append(box[idx]), s.append(score), l.append(torch.full_like(score, label, dtype=torch.int64))
    return torch.cat(b).numpy(), torch.cat(s).numpy(), torch.cat(l).numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join("build", "ssdlite"))
    ap.add_argument("--threads", default="2")
    ap.add_argument("--checker", default=os.path.join("build", "ssdlite_check"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    m, path = network(), os.path.join(a.out, "ssdlite_candidates.onnx")
    torch.onnx.export(m, ([torch.rand(3, 320, 320)],), path, opset_version=17, input_names=["image"])
    mm = onnx.load(path)
    del mm.graph.output[:]
    for name in CAND:
        mm.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    onnx.save(mm, path)
    logits = {}
    m.head.register_forward_hook(lambda mod, i, o: logits.update(o))
    for seed in (1, 2, 3):
        x = torch.rand(3, 320, 320, generator=torch.Generator().manual_seed(seed))
        raw, pre = os.path.join(a.out, "image%d.raw" % seed), os.path.join(a.out, "out%d_" % seed)
        x.numpy().astype(np.float32).tofile(raw)
        r = subprocess.run([a.checker, path, a.threads, raw, pre], capture_output=True, text=True)
        if r.returncode:
            print("seed %d: %s" % (seed, r.stderr.strip()))
            continue
        with torch.no_grad():
            m([x])
        got = [np.fromfile(pre + "%d.bin" % k, np.int64 if k == 2 else np.float32) for k in range(5)]
        gb, gs, gl = got[0].reshape(-1, 4), got[1], got[2]
        rb, rs, rl = candidates(torch.from_numpy(got[3].reshape(-1, 4)), torch.from_numpy(got[4].reshape(-1, 91)))
        same = len(rs) == len(gs)
        ref_sm = torch.softmax(logits["cls_logits"], -1).numpy().ravel()
        print("seed %d: %s; candidates luthier %d, torchvision's loop on luthier's scores %d%s; softmax max |luthier - "
              "PyTorch| %.3g (max %.3g)" % (seed, r.stdout.splitlines()[0], len(gs), len(rs),
                                           ": boxes max |diff| %.3g, scores %.3g, labels equal %s" % (
                                               np.abs(rb - gb).max(), np.abs(rs - gs).max(), bool((rl == gl).all()))
                                           if same else "", np.abs(ref_sm - got[4]).max(), np.abs(ref_sm).max()))


if __name__ == "__main__":
    main()
