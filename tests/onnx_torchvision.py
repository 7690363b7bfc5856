#!/usr/bin/python3
"""Full-size networks exported from PyTorch to ONNX, loaded by luthier_onnx.h and compared with PyTorch.

Run on demand from the repository root (`make onnx-torchvision` builds the checker and runs this):

    /usr/bin/python3 tests/onnx_torchvision.py [--checker build/onnx_check] [--out build/onnx_torchvision]
                                               [--opsets 13,17] [--models resnet18,bert] [--loads 5]

Needs Debian's torch and torchvision (apt-get install python3-torch python3-torchvision); without
them it says what is skipped and exits 0. Nothing is downloaded: the torchvision architectures are
built with weights=None and a fixed seed (BatchNorm statistics randomized so that they matter), in
eval mode, and exported with torch.onnx.export's defaults (constant folding on) at each opset.

For each network: the input and PyTorch's output are written as serialized TensorProtos next to
the .onnx file (all under --out, a build directory: nothing here is committed), then
tests/onnx_check.c loads the model with luthier (--loads times, median load time), plans it, runs
it and reports the largest |luthier - PyTorch| relative to max |PyTorch output|. A network passes
when that is <= 1e-4. A table (Markdown) is printed at the end; the exit status is 1 when any
network failed to load or mismatched.

Networks: resnet18 resnet50 mobilenet_v2 googlenet vgg16 alexnet (torchvision, 1x3x224x224; the
default set), any other torchvision classification model by name (inception_v3 at 299x299), the
groups `classification` (every classification model of the installed torchvision) and
`segmentation` (deeplabv3_mobilenet_v3_large, lraspp_mobilenet_v3_large, fcn_resnet50 at
1x3x224x224, their "out" map compared), and
    bert         BERT-like encoder written as Hugging Face's BERT is: word + position + token-type
                 embeddings, LayerNorm, 4 post-LN layers (d 256, 4 heads, FFN 1024, erf GELU),
                 separate q/k/v projections, view/permute heads, scaled softmax attention;
                 input_ids [1,128] (int64)
    transformer  torch.nn.TransformerEncoder: 3 layers of nn.TransformerEncoderLayer (d 256,
                 4 heads, FFN 1024, GELU, batch_first) on [1,128,256] embeddings, final LayerNorm
"""
import argparse
import math
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    torch = None
try:
    import torchvision
except ImportError:
    torchvision = None

VISION = ["resnet18", "resnet50", "mobilenet_v2", "googlenet", "vgg16", "alexnet"]
TEXT = ["bert", "transformer"]
SEGMENTATION = ["deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large", "fcn_resnet50"]


def classification_models():
    """Every classification architecture of the installed torchvision (list_models from 0.14)."""
    if hasattr(torchvision.models, "list_models"):
        return sorted(torchvision.models.list_models(module=torchvision.models))
    return sorted(n for n, f in vars(torchvision.models).items()
                  if callable(f) and n[0].islower() and not n.startswith("get_") and n not in ("list_models",))


def expand(models):
    """The --models list with the groups spelled out."""
    out = []
    for m in models:
        if m == "classification":
            out += classification_models() if torchvision else []
        elif m == "segmentation":
            out += SEGMENTATION
        else:
            out.append(m)
    return out


class OutMap(nn.Module if torch else object):
    """A segmentation model's "out" map (torchvision returns a dict)."""
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def tensor_proto(name, t):
    """Serialized TensorProto: dims (1), data_type (2), name (8), raw_data (9)."""
    sys.path.insert(0, HERE)
    from onnx_export import tensor_proto as tp  # the same writer as the committed test data
    return tp(name, t)


if torch is not None:
    class BertLayer(nn.Module):
        def __init__(self, d, heads, ffn):
            super().__init__()
            self.heads = heads
            self.query = nn.Linear(d, d)
            self.key = nn.Linear(d, d)
            self.value = nn.Linear(d, d)
            self.out = nn.Linear(d, d)
            self.ln1 = nn.LayerNorm(d, eps=1e-12)
            self.inter = nn.Linear(d, ffn)
            self.out2 = nn.Linear(ffn, d)
            self.ln2 = nn.LayerNorm(d, eps=1e-12)

        def heads_first(self, t):
            shape = t.size()[:-1] + (self.heads, t.size(-1) // self.heads)
            return t.view(shape).permute(0, 2, 1, 3)

        def forward(self, h):
            q = self.heads_first(self.query(h))
            k = self.heads_first(self.key(h))
            v = self.heads_first(self.value(h))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
            probs = nn.functional.softmax(scores, dim=-1)
            ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
            ctx = ctx.view(ctx.size()[:-2] + (ctx.size(-2) * ctx.size(-1),))
            h = self.ln1(self.out(ctx) + h)
            return self.ln2(self.out2(F.gelu(self.inter(h))) + h)

    class Bert(nn.Module):
        def __init__(self, vocab=1000, d=256, heads=4, ffn=1024, layers=4, positions=512):
            super().__init__()
            self.word = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(positions, d)
            self.token_type = nn.Embedding(2, d)
            self.ln = nn.LayerNorm(d, eps=1e-12)
            self.register_buffer("position_ids", torch.arange(positions).expand((1, -1)))
            self.layers = nn.ModuleList([BertLayer(d, heads, ffn) for _ in range(layers)])

        def forward(self, input_ids):
            s = input_ids.size(1)
            pos = self.position_ids[:, :s]
            types = torch.zeros_like(input_ids)
            h = self.ln(self.word(input_ids) + self.pos(pos) + self.token_type(types))
            for layer in self.layers:
                h = layer(h)
            return h

    class Transformer(nn.Module):
        def __init__(self, d=256, heads=4, ffn=1024, layers=3):
            super().__init__()
            layer = nn.TransformerEncoderLayer(d, heads, ffn, dropout=0.1, activation="gelu", batch_first=True)
            self.enc = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d))

        def forward(self, x):
            return self.enc(x)


def randomize_norms(model):
    """BatchNorm/LayerNorm statistics and affine parameters away from the identity (the same
    values as the committed test models)."""
    sys.path.insert(0, HERE)
    from onnx_export import randomize_bn
    randomize_bn(model)


def build(name):
    """(model, input, input name, output name)"""
    torch.manual_seed(0)
    if name in SEGMENTATION:
        model = OutMap(getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None))
        x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(2))
        in_name, out_name = "image", "out"
    elif name not in TEXT:
        kw = {"weights": None}
        if name in ("googlenet", "inception_v3"):
            kw.update(aux_logits=False, init_weights=True)
        model = getattr(torchvision.models, name)(**kw)
        side = 299 if name == "inception_v3" else 224
        x = torch.randn(1, 3, side, side, generator=torch.Generator().manual_seed(2))
        in_name, out_name = "image", "logits"
    elif name == "bert":
        model = Bert()
        x = torch.randint(0, 1000, (1, 128), generator=torch.Generator().manual_seed(3))
        in_name, out_name = "input_ids", "hidden"
    elif name == "transformer":
        model = Transformer()
        x = torch.randn(1, 128, 256, generator=torch.Generator().manual_seed(3))
        in_name, out_name = "embeddings", "hidden"
    else:
        raise ValueError(name)
    randomize_norms(model)
    model.eval()
    return model, x, in_name, out_name


def check(args, onnx_path, in_pb, out_pb):
    cmd = [args.checker, onnx_path, "--loads", str(args.loads), "--tol", str(args.tol), in_pb, "--", out_pb]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    vals = dict(re.findall(r"(\w+)=(\S+)", r.stdout))
    msg = r.stderr.strip().splitlines()
    return r.returncode, vals, (msg[-1] if msg else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checker", default=os.path.join(ROOT, "build", "onnx_check"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "onnx_torchvision"))
    ap.add_argument("--opsets", default="13,17")
    ap.add_argument("--models", default=",".join(VISION + TEXT))
    ap.add_argument("--loads", type=int, default=5, help="loads per model (the median time is reported)")
    ap.add_argument("--tol", type=float, default=1e-4, help="max |error| / max |output| to pass")
    ap.add_argument("--keep", action="store_true", help="keep the .onnx files (default: removed after the check)")
    args = ap.parse_args()

    if torch is None:
        print("onnx-torchvision: SKIPPED - needs PyTorch for %s (apt-get install python3-torch; run with /usr/bin/python3)"
              % sys.executable)
        return 0
    models = expand([m for m in args.models.split(",") if m])
    if torchvision is None:
        skipped = [m for m in models if m not in TEXT]
        if skipped:
            print("onnx-torchvision: SKIPPED %s - needs torchvision (apt-get install python3-torchvision)" % " ".join(skipped))
        models = [m for m in models if m in TEXT]
    if not os.path.exists(args.checker):
        print("onnx-torchvision: the checker %s is missing: make build/onnx_check" % args.checker)
        return 2
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(2)
    opsets = [int(o) for o in args.opsets.split(",")]
    rows, failed = [], 0
    print("torch %s, torchvision %s; checker %s; outputs in %s" %
          (torch.__version__, torchvision.__version__ if torchvision else "-", args.checker, args.out))
    for name in models:
        try:
            model, x, in_name, out_name = build(name)
            with torch.no_grad():
                y = model(x)
        except Exception as e:  # an architecture this torchvision cannot build at this size
            print("%-12s not built: %s" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__))
            continue
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        in_pb, out_pb = os.path.join(d, "input_0.pb"), os.path.join(d, "output_0.pb")
        with open(in_pb, "wb") as f:
            f.write(tensor_proto(in_name, x))
        with open(out_pb, "wb") as f:
            f.write(tensor_proto(out_name, y))
        for opset in opsets:
            path = os.path.join(d, "%s_opset%d.onnx" % (name, opset))
            t0 = time.time()
            try:
                torch.onnx.export(model, (x,), path, input_names=[in_name], output_names=[out_name], opset_version=opset)
            except Exception as e:  # not exportable at this opset: PyTorch's limit, not luthier's
                print("%-12s opset %2d not exported: %s" % (name, opset, str(e).splitlines()[0] if str(e) else type(e).__name__))
                continue
            export_s = time.time() - t0
            mb = os.path.getsize(path) / 1e6
            rc, v, msg = check(args, path, in_pb, out_pb)
            ok = rc == 0
            failed += not ok
            row = {"net": name, "opset": opset, "mb": mb, "load": v.get("load_ms", "-"), "plan": v.get("plan_ms", "-"),
                   "run": v.get("run_ms", "-"), "rel": v.get("rel", "-"), "nodes": v.get("nodes", "-"),
                   "pass": "yes" if ok else ("MISMATCH" if rc == 1 else "FAIL")}
            rows.append(row)
            print("%-12s opset %2d %7.1f MB (export %.1f s): load %s ms (min %s), plan %s ms, run %s ms, %s nodes, "
                  "max rel error %s  %s%s" % (name, opset, mb, export_s, row["load"], v.get("load_min_ms", "-"), row["plan"],
                                              row["run"], row["nodes"], row["rel"], row["pass"], (": " + msg) if msg else ""))
            sys.stdout.flush()
            if not args.keep:
                os.remove(path)
    print()
    print("| network | opset | ONNX MB | load ms (median of %d) | plan ms | run ms | nodes | max rel error | pass |" % args.loads)
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print("| %s | %d | %.1f | %s | %s | %s | %s | %s | %s |" % (r["net"], r["opset"], r["mb"], r["load"], r["plan"], r["run"],
                                                            r["nodes"], r["rel"], r["pass"]))
    print()
    print("%d passed, %d failed" % (len(rows) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
