#!/usr/bin/python3
"""Reference outputs of the luthier model zoo (luthier_zoo.h), computed with PyTorch.

Usage:
    /usr/bin/python3 tests/torch_ref.py [--check-torchvision] [--out DIR] [--threads T] [names...]
    /usr/bin/python3 tests/torch_ref.py --time NAME [--threads T] [--repeat R]
    /usr/bin/python3 tests/torch_ref.py --serve NAME [--threads T]

Without names every network of NAMES is written (full size and _small) to DIR
(default tests/data/models next to this script) as <name>.ref.
--check-torchvision proves that the width-parametrized CNNs below are torchvision's networks at
full width: identical state_dict keys and shapes, identical outputs with the same weights.
--time NAME builds the network NAME (the benchmark passes the full-size names), fills the
weights, warms up (2 runs), times --repeat runs under inference_mode and prints one line
"torch_ms_min=<x> torch_ms_median=<y>" (gpt2: the 128-token prompt; gpt2_decode: the one-token
step on the prompt's KV cache).
--serve NAME builds and warms up NAME the same way, prints "ready", then for every line N read
from standard input times N runs and prints "torch_ms=<t1>,<t2>,..." (milliseconds), until end
of input or N <= 0: the benchmark alternates these batches with its own runs, so both see the
same machine load.

Weights and inputs are deterministic (luthier_zoo.h implements the same generator):
  splitmix64, one stream per model with state = seed (42):
      state += 0x9E3779B97F4A7C15; z = state;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
      return z ^ (z >> 31)
  u = (next() >> 40) * 2^-23 - 1.0  (uniform in [-1, 1), 24 bits, exact in double)
  state_dict() order, non-floating tensors skipped, elements row-major,
  value = float32(u * s + o) computed in double, rounded once:
      *running_var: s 0.5 o 1.0 | *running_mean: s 0.1 o 0 | rank >= 2: s sqrt(6 / fan_in),
      fan_in = prod(shape[1:]) o 0 | *bias: s 0.1 o 0 | 1-D *weight: s 0.1 o 1.0
  Tied weights: GPT-2's lm_head is F.linear(x, wte.weight): no separate parameter, so the
  token embedding appears (and is generated) once. A tensor listed twice would be filled once.
  Inputs: a second stream with state = 7: images u per element (NCHW); token ids next() % vocab.
  gpt2_decode's token is draw number 128 (the one after gpt2's 128 prompt tokens); its 24 past
  tensors are gpt2's present key/value outputs for the prompt.

Fixture format (little-endian): "LUTHREF1", u32 version = 1, u32 num_slices, then per slice
u32 output_index, u64 offset, u64 count, count float32 values.
"""
import os
import sys

# The thread count must reach every pool before torch loads: torch.set_num_threads covers
# its own (OpenMP) threads, while Linear layers go through the system BLAS (OpenBLAS here),
# whose pool reads OPENBLAS_NUM_THREADS / OMP_NUM_THREADS when it starts. Without this a
# "1 thread" PyTorch run used both cores for its matrix products.
for _i, _a in enumerate(sys.argv):
    _v = _a.split("=", 1)[1] if _a.startswith("--threads=") else (sys.argv[_i + 1] if _a == "--threads" and _i + 1 < len(sys.argv) else None)
    if _v and _v.isdigit() and int(_v) > 0:
        for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[_k] = _v

import argparse
import math
import os
import statistics
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

GAMMA = np.uint64(0x9E3779B97F4A7C15)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
CHUNK = 1 << 22


class SplitMix64:
    """Counter-based view of splitmix64: draw i (0-based) = mix(seed + (i + 1) * gamma)."""

    def __init__(self, seed):
        self.seed = np.uint64(seed)
        self.count = 0

    def raw(self, n):
        out = np.empty(n, dtype=np.uint64)
        for a in range(0, n, CHUNK):
            b = min(n, a + CHUNK)
            idx = np.arange(self.count + a + 1, self.count + b + 1, dtype=np.uint64)
            with np.errstate(over="ignore"):
                z = self.seed + idx * GAMMA
                z = (z ^ (z >> np.uint64(30))) * M1
                z = (z ^ (z >> np.uint64(27))) * M2
            out[a:b] = z ^ (z >> np.uint64(31))
        self.count += n
        return out

    def uniform_f32(self, n, s, o):
        out = np.empty(n, dtype=np.float32)
        for a in range(0, n, CHUNK):
            b = min(n, a + CHUNK)
            u = (self.raw(b - a) >> np.uint64(40)).astype(np.float64) * (2.0 ** -23) - 1.0
            out[a:b] = (u * s + o).astype(np.float32)
        return out


def _splitmix_scalar_check():
    st = 42
    mask = (1 << 64) - 1
    ref = []
    for _ in range(5):
        st = (st + 0x9E3779B97F4A7C15) & mask
        z = st
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        ref.append(z ^ (z >> 31))
    assert [int(v) for v in SplitMix64(42).raw(5)] == ref


def weight_role(name, shape):
    """(s, o) of one state_dict tensor."""
    if name.endswith("running_var"):
        return 0.5, 1.0
    if name.endswith("running_mean"):
        return 0.1, 0.0
    if len(shape) >= 2:
        fan_in = 1
        for d in shape[1:]:
            fan_in *= d
        return math.sqrt(6.0 / fan_in), 0.0
    if name.endswith("bias"):
        return 0.1, 0.0
    if name.endswith("weight"):
        return 0.1, 1.0
    raise ValueError("no weight role for %s %s" % (name, tuple(shape)))


@torch.no_grad()
def fill_weights(model, seed=42):
    rng = SplitMix64(seed)
    seen = set()
    for name, t in model.state_dict().items():
        if not t.is_floating_point():
            continue
        key = (t.data_ptr(), tuple(t.shape))
        if key in seen:  # tied tensor listed twice: generated once
            continue
        seen.add(key)
        s, o = weight_role(name, t.shape)
        t.copy_(torch.from_numpy(rng.uniform_f32(t.numel(), s, o).reshape(t.shape)))
    return rng.count


# ---------------------------------------------------------------------------------------------
# CNNs: torchvision's networks, width-parametrized (div divides every channel count).

class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + idt)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + idt)


class ResNet(nn.Module):
    def __init__(self, block, layers, div=1, num_classes=1000):
        super().__init__()
        self.inplanes = 64 // div
        self.conv1 = nn.Conv2d(3, self.inplanes, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(block, 64 // div, layers[0], 1)
        self.layer2 = self._make_layer(block, 128 // div, layers[1], 2)
        self.layer3 = self._make_layer(block, 256 // div, layers[2], 2)
        self.layer4 = self._make_layer(block, 512 // div, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 // div * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class AlexNet(nn.Module):
    def __init__(self, div=1, hidden=4096, num_classes=1000):
        super().__init__()
        c = [64 // div, 192 // div, 384 // div, 256 // div, 256 // div]
        self.features = nn.Sequential(
            nn.Conv2d(3, c[0], 11, 4, 2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
            nn.Conv2d(c[0], c[1], 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
            nn.Conv2d(c[1], c[2], 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(c[2], c[3], 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(c[3], c[4], 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(0.5), nn.Linear(c[4] * 36, hidden), nn.ReLU(inplace=True),
            nn.Dropout(0.5), nn.Linear(hidden, hidden), nn.ReLU(inplace=True),
            nn.Linear(hidden, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


VGG16_CFG = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]


class VGG(nn.Module):
    def __init__(self, div=1, hidden=4096, num_classes=1000):
        super().__init__()
        layers, c = [], 3
        for v in VGG16_CFG:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(c, v // div, 3, padding=1), nn.ReLU(inplace=True)]
                c = v // div
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(c * 49, hidden), nn.ReLU(True), nn.Dropout(0.5),
            nn.Linear(hidden, hidden), nn.ReLU(True), nn.Dropout(0.5),
            nn.Linear(hidden, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class BasicConv2d(nn.Module):
    def __init__(self, cin, cout, k, stride=1, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, padding, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)), inplace=True)


class Inception(nn.Module):
    def __init__(self, cin, ch1, ch3r, ch3, ch5r, ch5, pool_proj):
        super().__init__()
        self.branch1 = BasicConv2d(cin, ch1, 1)
        self.branch2 = nn.Sequential(BasicConv2d(cin, ch3r, 1), BasicConv2d(ch3r, ch3, 3, padding=1))
        # torchvision uses 3x3 here too (a known deviation from the paper's 5x5)
        self.branch3 = nn.Sequential(BasicConv2d(cin, ch5r, 1), BasicConv2d(ch5r, ch5, 3, padding=1))
        self.branch4 = nn.Sequential(nn.MaxPool2d(3, 1, 1, ceil_mode=True), BasicConv2d(cin, pool_proj, 1))

    def forward(self, x):
        return torch.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1)


GOOGLENET_INCEPTION = [  # name, cin, ch1, ch3r, ch3, ch5r, ch5, pool_proj; "M..." = maxpool
    ("inception3a", 192, 64, 96, 128, 16, 32, 32),
    ("inception3b", 256, 128, 128, 192, 32, 96, 64),
    ("maxpool3",),
    ("inception4a", 480, 192, 96, 208, 16, 48, 64),
    ("inception4b", 512, 160, 112, 224, 24, 64, 64),
    ("inception4c", 512, 128, 128, 256, 24, 64, 64),
    ("inception4d", 512, 112, 144, 288, 32, 64, 64),
    ("inception4e", 528, 256, 160, 320, 32, 128, 128),
    ("maxpool4",),
    ("inception5a", 832, 256, 160, 320, 32, 128, 128),
    ("inception5b", 832, 384, 192, 384, 48, 128, 128),
]


class GoogLeNet(nn.Module):
    """torchvision GoogLeNet with aux_logits=False, transform_input=False."""

    def __init__(self, div=1, num_classes=1000):
        super().__init__()
        self.conv1 = BasicConv2d(3, 64 // div, 7, 2, 3)
        self.maxpool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.conv2 = BasicConv2d(64 // div, 64 // div, 1)
        self.conv3 = BasicConv2d(64 // div, 192 // div, 3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.blocks = []
        for e in GOOGLENET_INCEPTION:
            if e[0] == "maxpool3":
                m = nn.MaxPool2d(3, 2, ceil_mode=True)
            elif e[0] == "maxpool4":
                m = nn.MaxPool2d(2, 2, ceil_mode=True)
            else:
                m = Inception(*[v // div for v in e[1:]])
            setattr(self, e[0], m)
            self.blocks.append(e[0])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(1024 // div, num_classes)

    def forward(self, x):
        x = self.maxpool2(self.conv3(self.conv2(self.maxpool1(self.conv1(x)))))
        for b in self.blocks:
            x = getattr(self, b)(x)
        return self.fc(self.dropout(torch.flatten(self.avgpool(x), 1)))


class ConvBNReLU6(nn.Sequential):
    def __init__(self, cin, cout, k=3, stride=1, groups=1):
        super().__init__(nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, t):
        super().__init__()
        hidden = int(round(inp * t))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if t != 1:
            layers.append(ConvBNReLU6(inp, hidden, 1))
        layers += [ConvBNReLU6(hidden, hidden, 3, stride, hidden),
                   nn.Conv2d(hidden, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


MOBILENET_V2_SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
                        [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]


class MobileNetV2(nn.Module):
    """torchvision MobileNetV2 (width_mult 1.0); div divides every channel count (and 1280)."""

    def __init__(self, div=1, num_classes=1000):
        super().__init__()
        c = 32 // div
        feats = [ConvBNReLU6(3, c, 3, 2)]
        for t, co, n, s in MOBILENET_V2_SETTING:
            for i in range(n):
                feats.append(InvertedResidual(c, co // div, s if i == 0 else 1, t))
                c = co // div
        feats.append(ConvBNReLU6(c, 1280 // div, 1))
        self.features = nn.Sequential(*feats)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280 // div, num_classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(torch.flatten(x, 1))


# ---------------------------------------------------------------------------------------------
# Transformers

def _heads(x, h):  # [B,S,D] -> [B,H,S,D/H]
    b, s, d = x.shape
    return x.reshape(b, s, h, d // h).transpose(1, 2)


def _merge(x):  # [B,H,S,Dh] -> [B,S,H*Dh]
    b, h, s, dh = x.shape
    return x.transpose(1, 2).reshape(b, s, h * dh)


def _attention(q, k, v, causal):
    sq, skv = q.shape[2], k.shape[2]
    a = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        i = torch.arange(sq).unsqueeze(1)
        j = torch.arange(skv).unsqueeze(0)
        a = a.masked_fill(j > i + (skv - sq), float("-inf"))
    return torch.softmax(a, -1) @ v


class BertEmbeddings(nn.Module):
    def __init__(self, vocab, d, max_pos, eps):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d)
        self.position_embeddings = nn.Embedding(max_pos, d)
        self.token_type_embeddings = nn.Embedding(2, d)
        self.LayerNorm = nn.LayerNorm(d, eps=eps)

    def forward(self, ids):
        s = ids.shape[1]
        x = self.word_embeddings(ids)
        x = x + self.position_embeddings(torch.arange(s))
        x = x + self.token_type_embeddings(torch.zeros(s, dtype=torch.long))
        return self.LayerNorm(x)


class BertAttention(nn.Module):
    def __init__(self, d, heads, eps):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.output = nn.Linear(d, d)
        self.LayerNorm = nn.LayerNorm(d, eps=eps)

    def forward(self, x):
        q, k, v = (_heads(m(x), self.heads) for m in (self.query, self.key, self.value))
        return self.LayerNorm(x + self.output(_merge(_attention(q, k, v, False))))


class BertLayer(nn.Module):
    def __init__(self, d, heads, ffn, eps):
        super().__init__()
        self.attention = BertAttention(d, heads, eps)
        self.intermediate = nn.Linear(d, ffn)
        self.output = nn.Linear(ffn, d)
        self.LayerNorm = nn.LayerNorm(d, eps=eps)

    def forward(self, x):
        x = self.attention(x)
        return self.LayerNorm(x + self.output(F.gelu(self.intermediate(x))))


class BertEncoder(nn.Module):
    def __init__(self, layers, d, heads, ffn, eps):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(d, heads, ffn, eps) for _ in range(layers)])


class Bert(nn.Module):
    def __init__(self, vocab, d, layers, heads, ffn, max_pos, eps=1e-12):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab, d, max_pos, eps)
        self.encoder = BertEncoder(layers, d, heads, ffn, eps)

    def forward(self, ids):
        x = self.embeddings(ids)
        for layer in self.encoder.layer:
            x = layer(x)
        return x


class GPT2Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.c_proj = nn.Linear(d, d)

    def forward(self, x, past=None):
        q, k, v = (_heads(m(x), self.heads) for m in (self.q_proj, self.k_proj, self.v_proj))
        present = (k, v)
        if past is not None:
            k = torch.cat([past[0], k], 2)
            v = torch.cat([past[1], v], 2)
        return self.c_proj(_merge(_attention(q, k, v, True))), present


class GPT2MLP(nn.Module):
    def __init__(self, d, ffn):
        super().__init__()
        self.c_fc = nn.Linear(d, ffn)
        self.c_proj = nn.Linear(ffn, d)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class GPT2Block(nn.Module):
    def __init__(self, d, heads, ffn, eps):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=eps)
        self.attn = GPT2Attention(d, heads)
        self.ln_2 = nn.LayerNorm(d, eps=eps)
        self.mlp = GPT2MLP(d, ffn)

    def forward(self, x, past=None):
        a, present = self.attn(self.ln_1(x), past)
        x = x + a
        return x + self.mlp(self.ln_2(x)), present


class GPT2(nn.Module):
    """lm_head is tied: F.linear(h, wte.weight), so state_dict lists wte.weight once."""

    def __init__(self, vocab, d, layers, heads, ffn, n_pos, eps=1e-5):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n_pos, d)
        self.h = nn.ModuleList([GPT2Block(d, heads, ffn, eps) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d, eps=eps)

    def run(self, ids, past=None, pos0=0):
        s = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(pos0, pos0 + s))
        presents = []
        for i, blk in enumerate(self.h):
            x, pr = blk(x, None if past is None else (past[2 * i], past[2 * i + 1]))
            presents += list(pr)
        logits = F.linear(self.ln_f(x[:, -1, :]), self.wte.weight)  # [B, vocab]
        return logits, presents


# ---------------------------------------------------------------------------------------------
# The zoo

CNN_FULL = {
    "resnet18": dict(kind="resnet", block=BasicBlock, layers=[2, 2, 2, 2]),
    "resnet50": dict(kind="resnet", block=Bottleneck, layers=[3, 4, 6, 3]),
    "resnet101": dict(kind="resnet", block=Bottleneck, layers=[3, 4, 23, 3]),
    "alexnet": dict(kind="alexnet"),
    "vgg16": dict(kind="vgg"),
    "googlenet": dict(kind="googlenet"),
    "mobilenet_v2": dict(kind="mobilenet_v2"),
}
# Reduced variants: channel divisor, classifier hidden width, classes, input size (these numbers
# are repeated in luthier_zoo.h).
CNN_SMALL = {
    "resnet18": dict(div=4, classes=100, size=64),
    "resnet50": dict(div=4, classes=100, size=64),
    "resnet101": dict(div=4, classes=100, size=64),
    "alexnet": dict(div=4, hidden=256, classes=100, size=128),
    "vgg16": dict(div=8, hidden=256, classes=100, size=64),
    "googlenet": dict(div=4, classes=100, size=96),
    "mobilenet_v2": dict(div=4, classes=100, size=128),
}
BERT_FULL = dict(vocab=30522, d=768, layers=12, heads=12, ffn=3072, max_pos=512, seq=128)
BERT_SMALL = dict(vocab=1000, d=64, layers=2, heads=4, ffn=256, max_pos=64, seq=16)
GPT2_FULL = dict(vocab=50257, d=768, layers=12, heads=12, ffn=3072, n_pos=1024, seq=128)
GPT2_SMALL = dict(vocab=1000, d=64, layers=2, heads=4, ffn=256, n_pos=64, seq=16)

BASE_NAMES = ["resnet18", "resnet50", "resnet101", "alexnet", "vgg16", "googlenet", "mobilenet_v2",
              "bert", "gpt2", "gpt2_decode"]
NAMES = BASE_NAMES + [n + "_small" for n in BASE_NAMES]


def make_cnn(base, small):
    cfg = CNN_FULL[base]
    sm = CNN_SMALL[base] if small else dict(div=1, hidden=4096, classes=1000, size=224)
    kind, div, classes = cfg["kind"], sm["div"], sm["classes"]
    if kind == "resnet":
        m = ResNet(cfg["block"], cfg["layers"], div, classes)
    elif kind == "alexnet":
        m = AlexNet(div, sm["hidden"], classes)
    elif kind == "vgg":
        m = VGG(div, sm["hidden"], classes)
    elif kind == "googlenet":
        m = GoogLeNet(div, classes)
    else:
        m = MobileNetV2(div, classes)
    return m, sm["size"]


class Net:
    """A network of the zoo: module, inputs, run() -> list of output tensors."""

    def __init__(self, name, seed=42):
        self.name = name
        small = name.endswith("_small")
        base = name[:-6] if small else name
        if base not in BASE_NAMES:
            raise SystemExit("unknown network %r (known: %s)" % (name, " ".join(NAMES)))
        self.base = base
        torch.manual_seed(0)
        rin = SplitMix64(7)
        if base in CNN_FULL:
            self.module, size = make_cnn(base, small)
            self.inputs = [torch.from_numpy(rin.uniform_f32(3 * size * size, 1.0, 0.0)
                                            .reshape(1, 3, size, size))]
        elif base == "bert":
            c = BERT_SMALL if small else BERT_FULL
            self.module = Bert(c["vocab"], c["d"], c["layers"], c["heads"], c["ffn"], c["max_pos"])
            ids = (rin.raw(c["seq"]) % np.uint64(c["vocab"])).astype(np.int64)
            self.inputs = [torch.from_numpy(ids).reshape(1, -1)]
        else:
            c = GPT2_SMALL if small else GPT2_FULL
            self.cfg = c
            self.module = GPT2(c["vocab"], c["d"], c["layers"], c["heads"], c["ffn"], c["n_pos"])
            ids = (rin.raw(c["seq"] + 1) % np.uint64(c["vocab"])).astype(np.int64)
            self.prompt = torch.from_numpy(ids[:-1].copy()).reshape(1, -1)
            self.token = torch.from_numpy(ids[-1:].copy()).reshape(1, 1)
            self.inputs = [self.prompt] if base == "gpt2" else [self.token]
        self.module.eval()
        self.num_weights = fill_weights(self.module, seed)

    def run(self):
        with torch.inference_mode():
            if self.base == "gpt2":
                logits, presents = self.module.run(self.prompt)
                return [logits] + presents
            if self.base == "gpt2_decode":
                _, presents = self.module.run(self.prompt)
                logits, _ = self.module.run(self.token, presents, self.prompt.shape[1])
                return [logits]
            return [self.module(self.inputs[0])]


# ---------------------------------------------------------------------------------------------
# Fixtures

BUDGET = 16384


def slices_for(outputs):
    """[(output_index, offset, count)] totalling <= BUDGET floats."""
    sizes = [int(o.numel()) for o in outputs]
    if sum(sizes) <= BUDGET:
        return [(i, 0, n) for i, n in enumerate(sizes)]
    if len(sizes) == 1:
        shares = [BUDGET]
    else:  # first output (logits) gets half, the rest share the other half
        rest = (BUDGET // 2) // (len(sizes) - 1)
        shares = [BUDGET - rest * (len(sizes) - 1)] + [rest] * (len(sizes) - 1)
    out = []
    for i, (n, share) in enumerate(zip(sizes, shares)):
        if n <= share:
            out.append((i, 0, n))
        else:
            h = share // 2
            out += [(i, 0, h), (i, n - (share - h), share - h)]
    return out


def write_fixture(path, outputs):
    flat = [o.detach().reshape(-1).numpy().astype("<f4") for o in outputs]
    sl = slices_for(outputs)
    with open(path, "wb") as f:
        f.write(b"LUTHREF1" + struct.pack("<II", 1, len(sl)))
        for i, off, cnt in sl:
            f.write(struct.pack("<IQQ", i, off, cnt))
            f.write(flat[i][off:off + cnt].tobytes())
    return sl


def read_fixture(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"LUTHREF1"
    ver, n = struct.unpack_from("<II", data, 8)
    pos, out = 16, []
    for _ in range(n):
        i, off, cnt = struct.unpack_from("<IQQ", data, pos)
        pos += 20
        out.append((i, off, np.frombuffer(data, "<f4", cnt, pos)))
        pos += 4 * cnt
    return out


# ---------------------------------------------------------------------------------------------
# torchvision check

def check_torchvision():
    import torchvision.models as tvm
    tv = {
        "resnet18": lambda: tvm.resnet18(weights=None),
        "resnet50": lambda: tvm.resnet50(weights=None),
        "resnet101": lambda: tvm.resnet101(weights=None),
        "alexnet": lambda: tvm.alexnet(weights=None),
        "vgg16": lambda: tvm.vgg16(weights=None),
        "googlenet": lambda: tvm.googlenet(weights=None, aux_logits=False, transform_input=False,
                                           init_weights=False),
        "mobilenet_v2": lambda: tvm.mobilenet_v2(weights=None),
    }
    ok = True
    for base, ctor in tv.items():
        mine, size = make_cnn(base, False)
        ref = ctor()
        a, b = mine.state_dict(), ref.state_dict()
        ka = [(k, tuple(v.shape), v.dtype) for k, v in a.items()]
        kb = [(k, tuple(v.shape), v.dtype) for k, v in b.items()]
        same_keys = ka == kb
        n1 = fill_weights(mine.eval())
        n2 = fill_weights(ref.eval())
        x = torch.from_numpy(SplitMix64(7).uniform_f32(3 * size * size, 1.0, 0.0).reshape(1, 3, size, size))
        with torch.inference_mode():
            ya, yb = mine(x), ref(x)
        same_out = torch.equal(ya, yb)
        err = (ya - yb).abs().max().item()
        print("%-13s state_dict %s (%d tensors, %d weights), outputs %s (max diff %g)" % (
            base, "identical" if same_keys else "DIFFERENT", len(ka), n1,
            "identical" if same_out else "DIFFERENT", err))
        if not same_keys:
            for p, q in zip(ka, kb):
                if p != q:
                    print("   first difference: %s vs %s" % (p, q))
                    break
            if len(ka) != len(kb):
                print("   %d vs %d tensors" % (len(ka), len(kb)))
        ok = ok and same_keys and same_out and n1 == n2
        del mine, ref
    print("check-torchvision: %s" % ("PASS" if ok else "FAIL"))
    return ok


def timed_fn(name):
    """The call the benchmark times for network `name` (built, weights filled)."""
    net = Net(name)
    if net.base == "gpt2_decode":  # the decode step alone, on the prompt's KV cache
        with torch.inference_mode():
            past = net.module.run(net.prompt)[1]
        return lambda: net.module.run(net.token, past, net.prompt.shape[1])
    if net.base == "gpt2":
        return lambda: net.module.run(net.prompt)
    return lambda: net.module(net.inputs[0])


def run_timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def time_net(name, repeat):
    fn = timed_fn(name)
    with torch.inference_mode():
        for _ in range(2):
            fn()
        times = run_timed(fn, repeat)
    print("torch_ms_min=%.3f torch_ms_median=%.3f" % (min(times), statistics.median(times)))


def serve_net(name):
    fn = timed_fn(name)
    with torch.inference_mode():
        for _ in range(2):
            fn()
        print("ready", flush=True)
        for line in sys.stdin:
            try:
                n = int(line.strip() or "0")
            except ValueError:
                n = 0
            if n <= 0:
                break
            print("torch_ms=" + ",".join("%.3f" % t for t in run_timed(fn, n)), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--check-torchvision", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "models"))
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--time", metavar="NAME")
    ap.add_argument("--serve", metavar="NAME")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    _splitmix_scalar_check()
    if args.time:
        time_net(args.time, max(1, args.repeat))
        return 0
    if args.serve:
        serve_net(args.serve)
        return 0
    if args.check_torchvision:
        if not check_torchvision():
            return 1
        if not args.names:
            return 0
    names = args.names or NAMES
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        t0 = time.perf_counter()
        net = Net(name)
        outs = net.run()
        path = os.path.join(args.out, name + ".ref")
        sl = write_fixture(path, outs)
        back = read_fixture(path)
        assert len(back) == len(sl)
        mx = max(float(np.abs(v).max()) for _, _, v in back)
        print("%-20s %2d outputs %-28s weights %10d  slices %d  floats %5d  max|ref| %.4g  %.1fs" % (
            name, len(outs), "x".join(str(d) for d in outs[0].shape), net.num_weights, len(sl),
            sum(c for _, _, c in sl), mx, time.perf_counter() - t0))
        del net, outs
    return 0


if __name__ == "__main__":
    sys.exit(main())
