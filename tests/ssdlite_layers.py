#!/usr/bin/python3
"""Where ssdlite320_mobilenet_v3_large's fp32 rounding grows: luthier and PyTorch f32 against
PyTorch f64, tensor by tensor.

    cc -std=c99 -O2 -I. tests/ssdlite_check.c -o build/ssdlite_check -lpthread -lm
    /usr/bin/python3 tests/ssdlite_layers.py [--seed 3] [--out build/ssdlayers] [--ops Conv,Add,...]

The network is tests/ssdlite_check.py's (same seeded weights). Every output of the backbone's and
the heads' Conv, activation, Add, Mul and GlobalAveragePool nodes becomes a graph output; the same
tensors are taken from PyTorch's modules by forward hooks, in f32 and in f64 (a Conv's BatchNorm is
folded into it by the export, so its tensor is the BatchNorm's output). For each tensor, in graph
order, the script prints the largest and the root-mean-square difference from f64 of luthier and of
PyTorch f32, both relative to the largest |f64|, and their ratio; then the same for the softmax
scores.

With --emulate it instead runs PyTorch f32 with the squeeze-excitation blocks' 1x1 convolutions (on
one pixel: a matrix-vector product) and optionally their global average pooling replaced by numpy
emulations of a single running sum (sequential fused multiply-adds from the bias, as a GEMM
microkernel accumulates one output over k), and prints the softmax scores' differences from f64 of
PyTorch f32 as it is and as emulated, per seed: whether that accumulation order alone reproduces
luthier's error.
"""
import argparse
import copy
import os
import subprocess
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ssdlite_check import network  # noqa: E402

OPS = "Conv,Relu,HardSwish,HardSigmoid,Clip,Add,Mul,GlobalAveragePool"


def module_path(node_name):
    """'/backbone/features.0/features.0.3/block/block.1/block.1.0/Conv' -> the module's full name
    'backbone.features.0.3.block.1.0' (each scope is named relative to the one before it)."""
    comps, full, prev = node_name.strip("/").split("/")[:-1], "", ""
    for c in comps:
        full = full + c[len(prev):] if prev and c.startswith(prev + ".") else (full + "." + c if full else c)
        prev = c
    return full


def hooked(m, names):
    """Forward hooks recording the outputs of the modules in names; the dict they fill."""
    mods, rec = dict(m.named_modules()), {}
    for n in names:
        mods[n].register_forward_hook(lambda mod, i, o, n=n: rec.__setitem__(n, o.detach().double().numpy().copy()))
    return rec


def tensor_module(m, node):
    """The module whose output is node's output: a Conv followed by a BatchNorm is the BatchNorm."""
    path, mods = module_path(node.name), dict(m.named_modules())
    if node.op_type == "Conv" and path.rsplit(".", 1)[0] in mods:
        parent, idx = path.rsplit(".", 1)
        sib = parent + "." + str(int(idx) + 1) if idx.isdigit() else None
        if sib in mods and isinstance(mods[sib], torch.nn.BatchNorm2d):
            return sib
    return path if path in mods else None


class SequentialFc(torch.nn.Module):
    """A 1x1 convolution on a [1, K, 1, 1] f32 input, each output one running f32 sum over k
    from its bias (every step an exact product added and rounded once, as a fused multiply-add)."""

    def __init__(self, conv):
        super().__init__()
        self.w = conv.weight.detach().numpy()[:, :, 0, 0].astype(np.float64)
        self.b = conv.bias.detach().numpy().astype(np.float32)

    def forward(self, x):
        v, acc = x.detach().numpy().reshape(-1).astype(np.float64), self.b.copy()
        for k in range(v.size):
            acc = (acc.astype(np.float64) + self.w[:, k] * v[k]).astype(np.float32)
        return torch.from_numpy(acc.reshape(1, -1, 1, 1))


class SequentialMean(torch.nn.Module):
    """Global average pooling as one running f32 sum per channel over all pixels, then / (h w)."""

    def forward(self, x):
        v = x.detach().numpy().reshape(x.shape[1], -1)
        return torch.from_numpy((np.cumsum(v, 1, dtype=np.float32)[:, -1] / np.float32(v.shape[1])).reshape(1, -1, 1, 1))


def emulate(seeds, with_pool):
    """Softmax differences from f64: PyTorch f32, and PyTorch f32 with the squeeze-excitation
    accumulations emulated (with_pool: the pooling too)."""
    m = network()
    m64, emu = copy.deepcopy(m).double(), copy.deepcopy(m)
    for mod in emu.modules():
        if type(mod).__name__ == "SqueezeExcitation":
            mod.fc1, mod.fc2 = SequentialFc(mod.fc1), SequentialFc(mod.fc2)
            if with_pool:
                mod.avgpool = SequentialMean()
    logits = {}
    for k, net in (("f32", m), ("f64", m64), ("emu", emu)):
        net.head.register_forward_hook(lambda mod, i, o, k=k: logits.__setitem__(k, torch.softmax(o["cls_logits"], -1).double()))
    for seed in seeds:
        x = torch.rand(3, 320, 320, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            m([x]), m64([x.double()]), emu([x])
        d32, de = (logits[k] - logits["f64"] for k in ("f32", "emu"))
        print("seed %d softmax vs f64: PyTorch f32 max %.3g rms %.3g | f32 with sequential SE fc%s max %.3g rms %.3g" % (
            seed, d32.abs().max(), d32.pow(2).mean().sqrt(), " and pool" if with_pool else "", de.abs().max(),
            de.pow(2).mean().sqrt()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join("build", "ssdlayers"))
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--ops", default=OPS)
    ap.add_argument("--checker", default=os.path.join("build", "ssdlite_check"))
    ap.add_argument("--emulate", choices=["fc", "fc+pool"])
    a = ap.parse_args()
    if a.emulate:
        return emulate((1, 2, 3), a.emulate == "fc+pool")
    os.makedirs(a.out, exist_ok=True)
    m, path = network(), os.path.join(a.out, "ssdlite_layers.onnx")
    torch.onnx.export(m, ([torch.rand(3, 320, 320)],), path, opset_version=17, input_names=["image"])
    mm, ops, rows = onnx.load(path), set(a.ops.split(",")), []
    for node in mm.graph.node:
        if node.op_type in ops and node.name.startswith(("/backbone", "/head")):
            mod = tensor_module(m, node)
            if mod:
                rows.append((node.output[0], mod, node.op_type))
    sm = "/Squeeze_1_output_0"
    for t, _, _ in rows + [(sm, None, None)]:
        mm.graph.output.append(onnx.helper.make_empty_tensor_value_info(t))
    onnx.save(mm, path)
    n0 = len(mm.graph.output) - len(rows) - 1
    m64 = copy.deepcopy(m).double()
    r32, r64 = hooked(m, [r[1] for r in rows]), hooked(m64, [r[1] for r in rows])
    logits32, logits64 = {}, {}
    m.head.register_forward_hook(lambda mod, i, o: logits32.update(o))
    m64.head.register_forward_hook(lambda mod, i, o: logits64.update(o))
    x = torch.rand(3, 320, 320, generator=torch.Generator().manual_seed(a.seed))
    raw, pre = os.path.join(a.out, "image%d.raw" % a.seed), os.path.join(a.out, "t%d_" % a.seed)
    x.numpy().astype(np.float32).tofile(raw)
    r = subprocess.run([a.checker, path, a.threads, raw, pre], capture_output=True, text=True)
    if r.returncode:
        sys.exit(r.stderr.strip())
    with torch.no_grad():
        m([x]), m64([x.double()])
    print("seed %d, %s; relative to max|f64|: luthier max, rms | PyTorch f32 max, rms | ratio max, rms" % (
        a.seed, r.stdout.splitlines()[0]))
    for k, (t, mod, op) in enumerate(rows):
        got = np.fromfile(pre + "%d.bin" % (n0 + k), np.float32).astype(np.float64)
        ref, f32 = r64[mod].ravel(), r32[mod].ravel()
        if got.size != ref.size:
            print("%-60s size %d vs %d" % (mod, got.size, ref.size))
            continue
        scale = max(np.abs(ref).max(), 1e-30)
        el, ep = np.abs(got - ref) / scale, np.abs(f32 - ref) / scale
        rl, rp = np.sqrt((el ** 2).mean()), np.sqrt((ep ** 2).mean())
        print("%-52s %-17s %9.3g %9.3g | %9.3g %9.3g | %6.2f %6.2f" % (
            mod, op, el.max(), rl, ep.max(), rp, el.max() / max(ep.max(), 1e-30), rl / max(rp, 1e-30)))
    got = np.fromfile(pre + "%d.bin" % (n0 + len(rows)), np.float32).astype(np.float64)
    s64 = torch.softmax(logits64["cls_logits"], -1).numpy().ravel()
    s32 = torch.softmax(logits32["cls_logits"], -1).double().numpy().ravel()
    print("softmax scores: luthier max %.3g rms %.3g | PyTorch f32 max %.3g rms %.3g" % (
        np.abs(got - s64).max(), np.sqrt(((got - s64) ** 2).mean()), np.abs(s32 - s64).max(),
        np.sqrt(((s32 - s64) ** 2).mean())))


if __name__ == "__main__":
    main()
