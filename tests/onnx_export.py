#!/usr/bin/python3
"""Exports the small PyTorch models that tests/test_onnx.c loads with luthier_onnx.h.

Run on demand from the repository root with Debian's torch (the python3 on PATH may lack it):

    /usr/bin/python3 tests/onnx_export.py          # apt-get install python3-torch

Writes, for each model NAME, tests/data/onnx/NAME.onnx and tests/data/onnx/NAME/input_K.pb,
output_K.pb: serialized ONNX TensorProtos (name = the graph input/output name, raw_data) with
PyTorch's outputs for a fixed input. The outputs are committed, so the tests need no Python.

Models (weights: torch.manual_seed(0) default init, BN statistics randomized, eval mode):
    cnn                 conv+BN+ReLU, maxpool, strided conv+BN+ReLU6 (Clip), avgpool, depthwise
                        conv, adaptive avgpool, flatten, linear, softmax      [1,3,32,32] opset 13
    resnet18_small      ResNet-18 layout (BasicBlocks 2,2,2,2 with 1x1 downsampling), widths / 8,
                        32x32 input, 10 classes                                [1,3,32,32] opset 13
    bert_block          BERT-like: token + position embeddings, LayerNorm, one post-LN encoder
                        layer (4 heads, d 32, FFN 64, erf GELU); opset 13, so LayerNorm and GELU
                        are exported decomposed and the shape arithmetic as Shape/Gather/... chains
    bert_block_opset17  the same weights at opset 17 (LayerNormalization op)
    gpt2_block          GPT-2-like: token + position embeddings, one pre-LN decoder layer (4
                        heads, d 32, causal mask, FFN 128) with Hugging Face's tanh GELU
                        (gelu_new, written out: Pow, Mul, Add, Tanh), final LayerNorm; opset 13

    /usr/bin/python3 tests/onnx_export.py gpt2_block    # only the models named
"""
import math
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from onnx_proto import field, varint  # (this folder)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "onnx")


def tensor_proto(name, t):
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9)."""
    t = t.detach().contiguous()
    if t.dtype == torch.float32:
        dtype, raw = 1, t.numpy().astype("<f4").tobytes()
    elif t.dtype == torch.int64:
        dtype, raw = 7, t.numpy().astype("<i8").tobytes()
    else:
        raise ValueError(t.dtype)
    b = b"".join(field(1, 0, varint(int(d))) for d in t.shape)
    b += field(2, 0, varint(dtype))
    nb = name.encode()
    b += field(8, 2, varint(len(nb)) + nb)
    b += field(9, 2, varint(len(raw)) + raw)
    return b


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool2 = nn.AvgPool2d(3, stride=1, padding=1)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool1(F.relu(self.bn1(self.conv1(x))))
        x = F.relu6(self.bn2(self.conv2(x)))
        x = self.dw(self.pool2(x)) + x
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return F.softmax(self.fc(x), dim=-1)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet18Small(nn.Module):
    def __init__(self, w=8, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, w, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(w)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], w
        for i, c in enumerate([w, 2 * w, 4 * w, 8 * w]):
            s = 1 if i == 0 else 2
            layers += [BasicBlock(cin, c, s), BasicBlock(c, c, 1)]
            cin = c
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(8 * w, classes)

    def forward(self, x):
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layers(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class BertBlock(nn.Module):
    def __init__(self, vocab=100, d=32, heads=4, ffn=64, positions=16):
        super().__init__()
        self.heads = heads
        self.word = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(positions, d)
        self.ln_emb = nn.LayerNorm(d, eps=1e-12)
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def split(self, t):
        b, s, d = t.size()
        return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, ids):
        b, s = ids.size()
        pos = torch.arange(s).unsqueeze(0)
        h = self.ln_emb(self.word(ids) + self.pos(pos))
        q, k, v = self.split(self.q(h)), self.split(self.k(h)), self.split(self.v(h))
        att = torch.softmax(q @ k.transpose(-1, -2) / (q.size(-1) ** 0.5), dim=-1)
        ctx = (att @ v).transpose(1, 2).contiguous().view(b, s, -1)
        h = self.ln1(h + self.o(ctx))
        f = self.fc2(F.gelu(self.fc1(h)))
        return self.ln2(h + f)


class NewGELU(nn.Module):
    """Hugging Face's gelu_new (GPT-2), as transformers writes it."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Block(nn.Module):
    def __init__(self, vocab=100, d=32, heads=4, ffn=128, positions=16):
        super().__init__()
        self.heads = heads
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(positions, d)
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, ffn)
        self.act = NewGELU()
        self.mlp_proj = nn.Linear(ffn, d)
        self.ln_f = nn.LayerNorm(d)
        self.register_buffer("mask", torch.triu(torch.full((positions, positions), -1e4), 1))

    def split(self, t):
        b, s, d = t.size()
        return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, ids):
        b, s = ids.size()
        h = self.wte(ids) + self.wpe(torch.arange(s).unsqueeze(0))
        q, k, v = self.c_attn(self.ln_1(h)).split(h.size(-1), dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.size(-1)) + self.mask[:s, :s], dim=-1)
        h = h + self.c_proj((att @ v).transpose(1, 2).contiguous().view(b, s, -1))
        h = h + self.mlp_proj(self.act(self.c_fc(self.ln_2(h))))
        return self.ln_f(h)


def randomize_bn(model):
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
        if isinstance(m, nn.LayerNorm):
            m.weight.data.copy_(torch.rand(m.normalized_shape, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.rand(m.normalized_shape, generator=g) * 0.2 - 0.1)


def export(name, model, x, in_name, out_name, opset):
    model.eval()
    with torch.no_grad():
        y = model(x)
    path = os.path.join(OUT, name + ".onnx")
    torch.onnx.export(model, (x,), path, input_names=[in_name], output_names=[out_name], opset_version=opset,
                      do_constant_folding=False)
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(tensor_proto(in_name, x))
    with open(os.path.join(d, "output_0.pb"), "wb") as f:
        f.write(tensor_proto(out_name, y))
    print("%-20s %8d bytes  output %s" % (name, os.path.getsize(path), tuple(y.shape)))


def main():
    want = set(sys.argv[1:])
    os.makedirs(OUT, exist_ok=True)
    if not want or "cnn" in want:
        torch.manual_seed(0)
        cnn = CNN()
        randomize_bn(cnn)
        export("cnn", cnn, torch.rand(1, 3, 32, 32) * 2 - 1, "image", "probs", 13)
    if not want or "resnet18_small" in want:
        torch.manual_seed(0)
        rn = ResNet18Small()
        randomize_bn(rn)
        export("resnet18_small", rn, torch.rand(1, 3, 32, 32) * 2 - 1, "image", "logits", 13)
    ids = torch.randint(0, 100, (1, 16), generator=torch.Generator().manual_seed(3))
    if not want or want & {"bert_block", "bert_block_opset17"}:
        torch.manual_seed(0)
        bert = BertBlock()
        randomize_bn(bert)
        export("bert_block", bert, ids, "input_ids", "hidden", 13)
        export("bert_block_opset17", bert, ids, "input_ids", "hidden", 17)
    if not want or "gpt2_block" in want:
        torch.manual_seed(0)
        gpt2 = GPT2Block()
        randomize_bn(gpt2)
        export("gpt2_block", gpt2, ids, "input_ids", "hidden", 13)
    return 0


if __name__ == "__main__":
    sys.exit(main())
