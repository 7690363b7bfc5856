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

Deployed-model families, each as NAME (opset 13) and NAME_opset17 (same weights; BatchNorm
statistics, GroupNorm / InstanceNorm affine parameters and PReLU slopes randomized):
    mbv3_small          MobileNetV3-like: hardswish stem, inverted residuals (depthwise 3x3 / 5x5,
                        ReLU or hardswish), squeeze-excitation (adaptive avgpool, 1x1 convs,
                        hardsigmoid, multiply), 1x1 conv, classifier Linear, hardswish, dropout,
                        Linear                                                 [1,3,32,32]
    yolo_small          YOLOv5-like: conv+BN+SiLU blocks (Sigmoid*Mul), CSP split (chunk) / concat,
                        nearest 2x upsample, concat of two scales, Detect head on both (sigmoid,
                        view / permute, x[..., :4] and x[..., 4:], grid and anchor grid made in
                        the graph as Detect._make_grid traces: Range, meshgrid, Expand; Pow)
                                                                               [1,3,32,32] -> [1,240,8]
    unet_small          U-Net: conv+GroupNorm+ReLU blocks, maxpool down, bilinear upsample with
                        align_corners False (lower) and True (upper), skip concats  [1,3,32,32]
    superres_small      ESPCN-like (5x5 / 3x3 convs, tanh, PixelShuffle x2) + ConvTranspose2d
                        (stride 2, output_padding 1) path, summed              [1,1,24,24] -> x2
    style_small         style transfer: ReflectionPad2d, InstanceNorm2d(affine), strided conv,
                        residual block, ConvTranspose2d up                     [1,3,32,32]
    kws_gru             keyword spotting: Conv1d + BatchNorm1d + ReLU, GRU (batch_first), Linear
                        on the last step                                       [1,40,49] MFCC
    kws_lstm            the same with PReLU (per channel) and a 2-layer bidirectional LSTM
    hf_bert_small       Hugging Face BertModel layout, inputs input_ids and attention_mask (int64,
                        [1,16], padding zeros in the mask): word + position + token-type
                        embeddings (buffers sliced), extended mask (1 - mask) * finfo.min, 2
                        layers (erf GELU), outputs last_hidden_state and the tanh pooler_output
    hf_gpt2_small       Hugging Face GPT2Model layout, same two inputs: causal mask from a bool
                        tril buffer (torch.where with finfo.min) plus the attention mask, gelu_new,
                        2 pre-LN layers, final LayerNorm
    deeplab_small       DeepLabV3-like: strided + dilated conv backbone, ASPP (1x1, dilated 3x3
                        branches, image pooling + bilinear upsample back), bilinear resize of the
                        logits to the input size                               [1,3,32,32]

    /usr/bin/python3 tests/onnx_export.py gpt2_block    # only the models named (a family name
                                                        # writes both of its opsets)
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


# ---- deployed-model families (small, random weights) ---------------------------------------------


class SqueezeExcite(nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.fc1 = nn.Conv2d(c, max(8, c // r), 1)
        self.fc2 = nn.Conv2d(max(8, c // r), c, 1)

    def forward(self, x):
        s = F.relu(self.fc1(F.adaptive_avg_pool2d(x, 1)))
        return x * F.hardsigmoid(self.fc2(s))


class InvertedResidual(nn.Module):
    def __init__(self, cin, exp, cout, k, stride, se, act):
        super().__init__()
        layers = []
        if exp != cin:
            layers += [nn.Conv2d(cin, exp, 1, bias=False), nn.BatchNorm2d(exp), act()]
        layers += [nn.Conv2d(exp, exp, k, stride, k // 2, groups=exp, bias=False), nn.BatchNorm2d(exp), act()]
        if se:
            layers.append(SqueezeExcite(exp))
        layers += [nn.Conv2d(exp, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class MBV3Small(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        cfg = [(16, 16, 16, 3, 2, True, nn.ReLU), (16, 48, 24, 3, 2, False, nn.ReLU), (24, 64, 24, 3, 1, False, nn.ReLU),
               (24, 72, 32, 5, 2, True, nn.Hardswish), (32, 96, 32, 5, 1, True, nn.Hardswish)]
        self.blocks = nn.Sequential(*[InvertedResidual(*c) for c in cfg])
        self.last = nn.Sequential(nn.Conv2d(32, 96, 1, bias=False), nn.BatchNorm2d(96), nn.Hardswish())
        self.classifier = nn.Sequential(nn.Linear(96, 128), nn.Hardswish(), nn.Dropout(0.2), nn.Linear(128, classes))

    def forward(self, x):
        x = self.last(self.blocks(self.stem(x)))
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ConvBNSiLU(nn.Module):
    def __init__(self, cin, cout, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.silu(self.bn(self.conv(x)))


class CSP(nn.Module):
    """CSP-like: one conv, split in two halves, a bottleneck on one, concat, a conv."""

    def __init__(self, cin, cout):
        super().__init__()
        self.cv1 = ConvBNSiLU(cin, cout)
        self.m1 = ConvBNSiLU(cout // 2, cout // 2)
        self.m2 = ConvBNSiLU(cout // 2, cout // 2, 3)
        self.cv2 = ConvBNSiLU(cout, cout)

    def forward(self, x):
        a, b = self.cv1(x).chunk(2, 1)
        return self.cv2(torch.cat([a, b + self.m2(self.m1(b))], 1))


class YoloSmall(nn.Module):
    """YOLOv5-like: backbone, upsample + concat neck, Detect head on two scales (3 anchors, 3 classes)."""

    def __init__(self, nc=3):
        super().__init__()
        self.no, self.na = nc + 5, 3
        self.stem = ConvBNSiLU(3, 16, 3, 2)
        self.down1 = ConvBNSiLU(16, 32, 3, 2)
        self.csp1 = CSP(32, 32)
        self.down2 = ConvBNSiLU(32, 64, 3, 2)
        self.csp2 = CSP(64, 64)
        self.lateral = ConvBNSiLU(64, 32)
        self.csp3 = CSP(64, 32)
        self.heads = nn.ModuleList([nn.Conv2d(32, self.na * self.no, 1), nn.Conv2d(64, self.na * self.no, 1)])
        self.strides = [8, 16]
        anchors = torch.tensor([[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]], dtype=torch.float32) / 8
        self.register_buffer("anchors", anchors.view(2, 3, 2))

    def make_grid(self, nx, ny, i):
        """YOLOv5's Detect._make_grid, traced: Range, meshgrid, stack, Expand"""
        shape = 1, self.na, ny, nx, 2
        y, x = torch.arange(ny, dtype=torch.float32), torch.arange(nx, dtype=torch.float32)
        yv, xv = torch.meshgrid(y, x, indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(shape) - 0.5
        anchor_grid = (self.anchors[i] * self.strides[i]).view((1, self.na, 1, 1, 2)).expand(shape)
        return grid, anchor_grid

    def forward(self, x):
        p3 = self.csp1(self.down1(self.stem(x)))
        p4 = self.csp2(self.down2(p3))
        up = F.interpolate(self.lateral(p4), scale_factor=2, mode="nearest")
        p3 = self.csp3(torch.cat([up, p3], 1))
        z = []
        for i, f in enumerate([p3, p4]):
            t = self.heads[i](f)
            bs, _, ny, nx = t.shape
            t = t.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            grid, anchor_grid = self.make_grid(nx, ny, i)
            y = t.sigmoid()
            box, conf = y[..., :4], y[..., 4:]
            xy = (box[..., :2] * 2 + grid) * self.strides[i]
            wh = (box[..., 2:4] * 2) ** 2 * anchor_grid
            z.append(torch.cat((xy, wh, conf), -1).view(bs, -1, self.no))
        return torch.cat(z, 1)


class GNBlock(nn.Module):
    def __init__(self, cin, cout, groups=4):
        super().__init__()
        self.c1, self.n1 = nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(groups, cout)
        self.c2, self.n2 = nn.Conv2d(cout, cout, 3, padding=1), nn.GroupNorm(groups, cout)

    def forward(self, x):
        return F.relu(self.n2(self.c2(F.relu(self.n1(self.c1(x))))))


class UNetSmall(nn.Module):
    def __init__(self, classes=2):
        super().__init__()
        self.enc1, self.enc2, self.mid = GNBlock(3, 8), GNBlock(8, 16), GNBlock(16, 32)
        self.dec2, self.dec1 = GNBlock(48, 16), GNBlock(24, 8)
        self.out = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([F.interpolate(m, scale_factor=2, mode="bilinear", align_corners=False), e2], 1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, scale_factor=2, mode="bilinear", align_corners=True), e1], 1))
        return self.out(d1)


class SuperResSmall(nn.Module):
    """ESPCN-like (tanh convs, PixelShuffle x2) plus a ConvTranspose2d (stride 2, output_padding 1) path."""

    def __init__(self, r=2):
        super().__init__()
        self.c1 = nn.Conv2d(1, 64, 5, padding=2)
        self.c2 = nn.Conv2d(64, 32, 3, padding=1)
        self.c3 = nn.Conv2d(32, r * r, 3, padding=1)
        self.shuffle = nn.PixelShuffle(r)
        self.up = nn.ConvTranspose2d(64, 1, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        f = torch.tanh(self.c1(x))
        return self.shuffle(self.c3(torch.tanh(self.c2(f)))) + self.up(f)


class ConvIN(nn.Module):
    def __init__(self, cin, cout, k, s=1, relu=True):
        super().__init__()
        self.pad = nn.ReflectionPad2d(k // 2)
        self.conv = nn.Conv2d(cin, cout, k, s)
        self.norm = nn.InstanceNorm2d(cout, affine=True)
        self.relu = relu

    def forward(self, x):
        y = self.norm(self.conv(self.pad(x)))
        return F.relu(y) if self.relu else y


class StyleSmall(nn.Module):
    """Johnson-style transfer net: reflection padding, InstanceNorm, a residual block, ConvTranspose2d up."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2 = ConvIN(3, 8, 9), ConvIN(8, 16, 3, 2)
        self.r1, self.r2 = ConvIN(16, 16, 3), ConvIN(16, 16, 3, relu=False)
        self.up = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1)
        self.up_norm = nn.InstanceNorm2d(8, affine=True)
        self.out_pad, self.out = nn.ReflectionPad2d(4), nn.Conv2d(8, 3, 9)

    def forward(self, x):
        y = self.c2(self.c1(x))
        y = y + self.r2(self.r1(y))
        y = F.relu(self.up_norm(self.up(y)))
        return self.out(self.out_pad(y))


class KwsGRU(nn.Module):
    def __init__(self, mfcc=40, c=32, hidden=32, classes=12):
        super().__init__()
        self.conv, self.bn = nn.Conv1d(mfcc, c, 3, padding=1), nn.BatchNorm1d(c)
        self.gru = nn.GRU(c, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x))).transpose(1, 2)
        y, _ = self.gru(y)
        return self.fc(y[:, -1])


class KwsLSTM(nn.Module):
    def __init__(self, mfcc=40, c=32, hidden=24, classes=12):
        super().__init__()
        self.conv, self.bn, self.act = nn.Conv1d(mfcc, c, 3, padding=1), nn.BatchNorm1d(c), nn.PReLU(c)
        self.lstm = nn.LSTM(c, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        y = self.act(self.bn(self.conv(x))).transpose(1, 2)
        y, _ = self.lstm(y)
        return self.fc(y[:, -1])


class HFBertLayer(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.dense, self.ln1 = nn.Linear(d, d), nn.LayerNorm(d, eps=1e-12)
        self.inter, self.out, self.ln2 = nn.Linear(d, ffn), nn.Linear(ffn, d), nn.LayerNorm(d, eps=1e-12)

    def split(self, t):
        return t.view(t.size()[:-1] + (self.heads, t.size(-1) // self.heads)).permute(0, 2, 1, 3)

    def forward(self, h, ext_mask):
        q, k, v = self.split(self.query(h)), self.split(self.key(h)), self.split(self.value(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1)) + ext_mask
        ctx = torch.matmul(F.softmax(scores, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (h.size(-1),))
        h = self.ln1(self.dense(ctx) + h)
        return self.ln2(self.out(F.gelu(self.inter(h))) + h)


class HFBertSmall(nn.Module):
    """Hugging Face BertModel layout: word + position + token-type embeddings, extended attention
    mask (1 - mask[:, None, None, :]) * finfo.min, 2 encoder layers, tanh pooler on [CLS]."""

    def __init__(self, vocab=100, d=32, heads=4, ffn=64, positions=32, layers=2):
        super().__init__()
        self.word, self.position, self.token_type = nn.Embedding(vocab, d), nn.Embedding(positions, d), nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(positions).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros((1, positions), dtype=torch.long))
        self.layers = nn.ModuleList([HFBertLayer(d, heads, ffn) for _ in range(layers)])
        self.pooler = nn.Linear(d, d)

    def forward(self, input_ids, attention_mask):
        s = input_ids.size(1)
        tt = self.token_type_ids[:, :s].expand(input_ids.size(0), s)
        h = self.word(input_ids) + self.token_type(tt) + self.position(self.position_ids[:, :s])
        h = self.ln(h)
        ext = attention_mask[:, None, None, :].to(torch.float32)
        ext = (1.0 - ext) * torch.finfo(torch.float32).min
        for layer in self.layers:
            h = layer(h, ext)
        return h, torch.tanh(self.pooler(h[:, 0]))


class HFGPT2Layer(nn.Module):
    def __init__(self, d, heads, ffn, positions):
        super().__init__()
        self.heads = heads
        self.ln_1, self.c_attn, self.c_proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ln_2, self.c_fc, self.mlp_proj, self.act = nn.LayerNorm(d), nn.Linear(d, ffn), nn.Linear(ffn, d), NewGELU()
        self.register_buffer("bias", torch.tril(torch.ones((positions, positions), dtype=torch.bool)).view(1, 1, positions, positions))

    def split(self, t):
        return t.view(t.size()[:-1] + (self.heads, t.size(-1) // self.heads)).permute(0, 2, 1, 3)

    def forward(self, h, ext_mask):
        q, k, v = self.c_attn(self.ln_1(h)).split(h.size(-1), dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype)
        ql, kl = q.size(-2), k.size(-2)
        causal = self.bias[:, :, kl - ql:kl, :kl]
        w = torch.where(causal, w, torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        w = F.softmax(w + ext_mask, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        h = h + self.c_proj(a.view(a.size()[:-2] + (h.size(-1),)))
        return h + self.mlp_proj(self.act(self.c_fc(self.ln_2(h))))


class HFGPT2Small(nn.Module):
    """Hugging Face GPT2Model layout: causal mask from a bool tril buffer (torch.where with finfo.min)
    plus the attention mask (1 - mask) * finfo.min, gelu_new, 2 pre-LN layers, final LayerNorm."""

    def __init__(self, vocab=100, d=32, heads=4, ffn=128, positions=32, layers=2):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(positions, d)
        self.layers = nn.ModuleList([HFGPT2Layer(d, heads, ffn, positions) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)

    def forward(self, input_ids, attention_mask):
        s = input_ids.size(-1)
        pos = torch.arange(0, s, dtype=torch.long).unsqueeze(0)
        h = self.wte(input_ids) + self.wpe(pos)
        m = attention_mask.view(input_ids.size(0), -1)[:, None, None, :].to(torch.float32)
        m = (1.0 - m) * torch.finfo(torch.float32).min
        for layer in self.layers:
            h = layer(h, m)
        return self.ln_f(h)


class ASPP(nn.Module):
    def __init__(self, cin, c, rates=(2, 3)):
        super().__init__()
        def cbr(k, d):
            return nn.Sequential(nn.Conv2d(cin, c, k, padding=d * (k // 2), dilation=d, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.branches = nn.ModuleList([cbr(1, 1)] + [cbr(3, r) for r in rates])
        self.pool = nn.Sequential(nn.Conv2d(cin, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.project = nn.Sequential(nn.Conv2d(c * (len(rates) + 2), c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                                     nn.Dropout(0.5))

    def forward(self, x):
        p = F.interpolate(self.pool(F.adaptive_avg_pool2d(x, 1)), size=x.shape[-2:], mode="bilinear", align_corners=False)
        return self.project(torch.cat([b(x) for b in self.branches] + [p], 1))


class DeepLabSmall(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 32, 3, 1, 2, dilation=2, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        self.aspp = ASPP(32, 16)
        self.head = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.Conv2d(16, classes, 1))

    def forward(self, x):
        y = self.head(self.aspp(self.backbone(x)))
        return F.interpolate(y, size=x.shape[-2:], mode="bilinear", align_corners=False)


def randomize_norms(model):
    """randomize_bn, plus BatchNorm1d, GroupNorm, InstanceNorm affine parameters and PReLU slopes."""
    randomize_bn(model)
    g = torch.Generator().manual_seed(2)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
        if isinstance(m, (nn.BatchNorm1d, nn.GroupNorm, nn.InstanceNorm2d)):
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.rand(m.bias.shape, generator=g) * 0.2 - 0.1)
        if isinstance(m, nn.PReLU):
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=g) * 0.4 - 0.1)


def export_multi(name, model, inputs, out_names, opset):
    """export with several named inputs (a list of (name, tensor)) and outputs."""
    model.eval()
    xs = tuple(t for _, t in inputs)
    with torch.no_grad():
        ys = model(*xs)
    ys = ys if isinstance(ys, tuple) else (ys,)
    path = os.path.join(OUT, name + ".onnx")
    torch.onnx.export(model, xs, path, input_names=[n for n, _ in inputs], output_names=list(out_names),
                      opset_version=opset, do_constant_folding=False)
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for k, (n, t) in enumerate(inputs):
        with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
            f.write(tensor_proto(n, t))
    for k, (n, t) in enumerate(zip(out_names, ys)):
        with open(os.path.join(d, "output_%d.pb" % k), "wb") as f:
            f.write(tensor_proto(n, t))
    print("%-20s %8d bytes  outputs %s" % (name, os.path.getsize(path), [tuple(y.shape) for y in ys]))


def family_inputs():
    g = torch.Generator().manual_seed(4)
    image = torch.rand(1, 3, 32, 32, generator=g) * 2 - 1
    ids = torch.randint(0, 100, (1, 16), generator=g)
    mask = torch.ones(1, 16, dtype=torch.long)
    mask[0, 11:] = 0  # padding at the end
    return {
        "mbv3_small": [("image", image)],
        "yolo_small": [("images", image)],
        "unet_small": [("image", image)],
        "superres_small": [("image", torch.rand(1, 1, 24, 24, generator=g))],
        "style_small": [("image", image)],
        "kws_gru": [("mfcc", torch.randn(1, 40, 49, generator=g))],
        "kws_lstm": [("mfcc", torch.randn(1, 40, 49, generator=g))],
        "hf_bert_small": [("input_ids", ids), ("attention_mask", mask)],
        "hf_gpt2_small": [("input_ids", ids), ("attention_mask", mask)],
        "deeplab_small": [("image", image)],
    }


FAMILIES = {  # name: (model class, output names)
    "mbv3_small": (MBV3Small, ["logits"]),
    "yolo_small": (YoloSmall, ["detections"]),
    "unet_small": (UNetSmall, ["mask"]),
    "superres_small": (SuperResSmall, ["upscaled"]),
    "style_small": (StyleSmall, ["styled"]),
    "kws_gru": (KwsGRU, ["logits"]),
    "kws_lstm": (KwsLSTM, ["logits"]),
    "hf_bert_small": (HFBertSmall, ["last_hidden_state", "pooler_output"]),
    "hf_gpt2_small": (HFGPT2Small, ["last_hidden_state"]),
    "deeplab_small": (DeepLabSmall, ["logits"]),
}


def export_families(want):
    """Each family at opset 13 (NAME) and 17 (NAME_opset17)."""
    inputs = family_inputs()
    for name, (cls, outs) in FAMILIES.items():
        if want and not want & {name, name + "_opset17"}:
            continue
        torch.manual_seed(0)
        model = cls()
        randomize_norms(model)
        export_multi(name, model, inputs[name], outs, 13)
        export_multi(name + "_opset17", model, inputs[name], outs, 17)


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
    export_families(want)
    return 0


if __name__ == "__main__":
    sys.exit(main())
