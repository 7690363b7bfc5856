#!/usr/bin/python3
"""PyTorch's eager latency of a torchvision model, and the same model as ONNX for luthier-bench.

    /usr/bin/python3 bench/torchvision_time.py mobilenet_v3_large --export build/mbv3l.onnx
    /usr/bin/python3 bench/torchvision_time.py mobilenet_v3_large [--threads 1] [--seconds 3]
    build/luthier-bench model build/mbv3l.onnx --threads 1 --min-time 3 --no-torch --layers 0

Needs Debian's python3-torch and python3-torchvision. The model is torchvision's architecture
with random weights (seed 0) and randomized batch-norm statistics (tests/onnx_export.py), in eval
mode, input randn(1, 3, 224, 224) (inception_v3: 299); --export writes it at opset 17 and exits,
else it prints the minimum latency of inference_mode runs over --seconds ("torch_ms N"). Run the
two alternately in one shell session: the ratio of their minima is the comparison.
"""
import argparse
import os
import sys
import time

import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--export", help="write the model as ONNX (opset 17) to this path and exit")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))
    from onnx_export import randomize_bn
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    kw = {"aux_logits": False, "init_weights": True} if args.model in ("googlenet", "inception_v3") else {}
    m = getattr(torchvision.models, args.model)(weights=None, **kw)
    randomize_bn(m)
    m.eval()
    side = 299 if args.model == "inception_v3" else 224
    x = torch.randn(1, 3, side, side, generator=torch.Generator().manual_seed(2))
    if args.export:
        torch.onnx.export(m, (x,), args.export, input_names=["image"], output_names=["logits"], opset_version=17)
        return 0
    with torch.inference_mode():
        for _ in range(5):
            m(x)
        best, end = 1e9, time.time() + args.seconds
        while time.time() < end:
            t0 = time.perf_counter()
            m(x)
            best = min(best, time.perf_counter() - t0)
    print("torch_ms %.3f" % (best * 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
