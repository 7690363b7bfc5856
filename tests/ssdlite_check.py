#!/usr/bin/python3
"""ssdlite320_mobilenet_v3_large end to end through luthier, against torchvision.

Run on demand from the repository root with Debian's torch, torchvision and onnx:

    cc -std=c99 -O2 -I. tests/ssdlite_check.c -o build/ssdlite_check -lpthread -lm
    /usr/bin/python3 tests/ssdlite_check.py [--out build/ssdlite] [--threads 2]

Weights: weights=None with torch.manual_seed(0), then re-drawn so that scores spread (the
default init gives every class 1/91 everywhere): convolutions He-normal, biases N(0, 0.1),
BatchNorm affine U(0.5, 1.5) / N(0, 0.1), statistics N(0, 0.1) / U(0.5, 1.5), the
classification head's class convolutions scaled by 0.3; score_thresh 0.05 (torchvision's 0.001
keeps every candidate of every class: 300 of each). Exported at opset 17 for one 3x320x320 image.

The drawn BatchNorm statistics are not those of the activations, which grow or vanish through
60 layers: the scores then hinge on rounding (PyTorch's own f32 and f64 models disagree on up to
a tenth of their detections). `--calibrate-bn N` sets every BatchNorm's statistics from N seeded
random images, as training leaves them; with `--calibrate-bn 8 --score-thresh 0.01` each image
gives 300 detections, and luthier's equal PyTorch's: the same labels and boxes, the scores within
a few 1e-6, the order differing only where scores tie.

The model's own outputs (boxes, scores, labels: after batched_nms's If, keep[:300], the gathers
and transform.postprocess) are kept, and the tensors they come from are added as outputs: the
per-class candidates batched_nms reads (boxes, scores, labels) and the decoded boxes and softmax
scores. For each fixed-seed image the script prints:
  - the detection count of luthier and of PyTorch's m([x]), and when equal the largest
    differences of boxes and scores and whether labels are equal, position by position; then
    how many of PyTorch's detections luthier also gives in any position (PyTorch's own f32
    rounding moves candidates across score_thresh and swaps near-equal scores, which changes
    what NMS suppresses after them); and as a yardstick how many of the f64 model's detections
    luthier gives and PyTorch's f32 gives;
  - the detection count of torchvision's postprocess (the per-class loop, batched_nms,
    detections_per_img, the box rescale) run on luthier's own decoded boxes and scores, and the
    differences from luthier's outputs: this isolates the graph's tail from the network's
    rounding (identical expected);
  - the largest difference of luthier's softmax scores from PyTorch's, and the largest and
    root-mean-square differences of luthier's and PyTorch's from the f64 model's.
"""
import argparse
import copy
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


def calibrate_bn(m, images):
    """Sets every BatchNorm's statistics to those of its inputs over a batch of seeded random
    images (cumulative averages, as a trained network's would be): each normalized activation
    then has unit scale, so scores are not at the mercy of rounding the way they are when
    random statistics let activations grow or vanish through 60 layers."""
    bns = [mod for mod in m.modules() if isinstance(mod, torch.nn.BatchNorm2d)]
    for bn in bns:
        bn.reset_running_stats(), bn.train()
        bn.momentum = None
    g = torch.Generator().manual_seed(100)
    with torch.no_grad():
        m([torch.rand(3, 320, 320, generator=g) for _ in range(images)])
    for bn in bns:
        bn.eval()


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


def tail(m, boxes, scores):
    """torchvision's SSD.postprocess_detections and transform.postprocess from decoded boxes
    [N, 4] and softmax scores [N, 91] (one 320x320 image: the rescale multiplies by 1)."""
    b, s, l = (torch.from_numpy(a) for a in candidates(torch.from_numpy(boxes), torch.from_numpy(scores)))
    keep = torchvision.ops.batched_nms(b, s, l, m.nms_thresh)[:m.detections_per_img]
    return b[keep].numpy(), s[keep].numpy(), l[keep].numpy()


def compare(what, got, ref):
    """One line: the counts, and when equal the largest differences (boxes, scores) and labels."""
    line = "%s %d vs %d" % (what, len(got[1]), len(ref[1]))
    if len(got[1]) == len(ref[1]) and len(got[1]):
        line += " (boxes max |diff| %.3g, scores %.3g, labels equal %s)" % (
            np.abs(got[0] - ref[0]).max(), np.abs(got[1] - ref[1]).max(), bool((got[2] == ref[2]).all()))
    return line


def matched(got, ref, tol=0.05):
    """How many of ref's detections luthier also gives: the same label, a box within tol pixels
    (order aside: near-equal scores swap places under different rounding), and the largest score
    difference over those pairs."""
    same = (ref[2][:, None] == got[2][None, :]) & (np.abs(ref[0][:, None, :] - got[0][None, :, :]).max(-1) < tol)
    ds = np.where(same, np.abs(ref[1][:, None] - got[1][None, :]), np.inf).min(1)
    return int(same.any(1).sum()), float(ds[np.isfinite(ds)].max()) if np.isfinite(ds).any() else 0.0


def main():
    global THRESH
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join("build", "ssdlite"))
    ap.add_argument("--threads", default="2")
    ap.add_argument("--checker", default=os.path.join("build", "ssdlite_check"))
    ap.add_argument("--score-thresh", type=float, default=THRESH)
    ap.add_argument("--calibrate-bn", type=int, default=0, metavar="N",
                    help="set BatchNorm statistics from N random images (0: the drawn ones)")
    a = ap.parse_args()
    THRESH = a.score_thresh
    os.makedirs(a.out, exist_ok=True)
    m, path = network(), os.path.join(a.out, "ssdlite.onnx")
    if a.calibrate_bn:
        calibrate_bn(m, a.calibrate_bn)
    torch.onnx.export(m, ([torch.rand(3, 320, 320)],), path, opset_version=17, input_names=["image"])
    mm = onnx.load(path)
    for name in CAND:
        mm.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    onnx.save(mm, path)
    logits, logits64, m64 = {}, {}, copy.deepcopy(m).double()
    m.head.register_forward_hook(lambda mod, i, o: logits.update(o))
    m64.head.register_forward_hook(lambda mod, i, o: logits64.update(o))
    for seed in (1, 2, 3):
        x = torch.rand(3, 320, 320, generator=torch.Generator().manual_seed(seed))
        raw, pre = os.path.join(a.out, "image%d.raw" % seed), os.path.join(a.out, "out%d_" % seed)
        x.numpy().astype(np.float32).tofile(raw)
        r = subprocess.run([a.checker, path, a.threads, raw, pre], capture_output=True, text=True)
        if r.returncode:
            print("seed %d: %s" % (seed, r.stderr.strip()))
            continue
        with torch.no_grad():
            det, d64 = m([x])[0], m64([x.double()])[0]
        got = [np.fromfile(pre + "%d.bin" % k, np.int64 if k in (2, 5) else np.float32) for k in range(8)]
        final = (got[0].reshape(-1, 4), got[1], got[2])
        ref = (det["boxes"].numpy(), det["scores"].numpy(), det["labels"].numpy())
        ref64 = (d64["boxes"].numpy(), d64["scores"].numpy(), d64["labels"].numpy())
        own = tail(m, got[6].reshape(-1, 4), got[7].reshape(-1, 91))
        cand = (got[3].reshape(-1, 4), got[4], got[5])
        rc = candidates(torch.from_numpy(got[6].reshape(-1, 4)), torch.from_numpy(got[7].reshape(-1, 91)))
        ref_sm = torch.softmax(logits["cls_logits"], -1).numpy().ravel()
        sm64 = torch.softmax(logits64["cls_logits"], -1).numpy().ravel()
        print("seed %d: %s; detections: %s; %s; %s; softmax max |luthier - PyTorch| %.3g, "
              "from f64: luthier max %.3g rms %.3g, PyTorch f32 max %.3g rms %.3g" % (
            seed, r.stdout.splitlines()[0], compare("luthier vs PyTorch m([x])", final, ref) +
            ", %d of PyTorch's also in luthier's (label, box within 0.05; their scores max |diff| %.3g); "
            "of PyTorch f64's, %d in luthier's, %d in PyTorch f32's" % (
                matched(final, ref) + (matched(final, ref64)[0], matched(ref, ref64)[0])),
            compare("luthier vs torchvision's tail on luthier's scores", final, own),
            compare("candidates luthier vs torchvision's loop", cand, rc), np.abs(ref_sm - got[7]).max(),
            np.abs(got[7] - sm64).max(), np.sqrt(((got[7] - sm64) ** 2).mean()), np.abs(ref_sm - sm64).max(),
            np.sqrt(((ref_sm - sm64) ** 2).mean())))


if __name__ == "__main__":
    main()
