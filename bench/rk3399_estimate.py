#!/usr/bin/env python3
"""rk3399_estimate.py - a static estimate of the zoo networks' fp32 latency on an RK3399
(2x Cortex-A72 @ 1.8 GHz + 4x Cortex-A53 @ 1.4 GHz), from llvm-mca figures of the NEON inner
loops and the per-layer work of the plan an AArch64 board makes.

  bench/mca_neon.sh > mca.txt
  make build/arm64/plan_steps
  QEMU_CPU=cortex-a72 qemu-aarch64 -L /usr/aarch64-linux-gnu build/arm64/plan_steps \\
      resnet18 resnet50 mobilenet_v2 > steps.tsv
  bench/rk3399_estimate.py --mca mca.txt --steps steps.tsv [--markdown] [--layers]

Model (per plan step, roofline: the larger of compute time and memory time):
  GEMM steps (conv2d 1x1 / im2col, dense: a microkernel): flops / (FMLA per cycle of that
    kernel's main loop on the core's llvm-mca model x 8 flops x clock), the FMLAs of partial
    8x12 tiles (rows: output pixels, columns: output channels) counted as work;
  depthwise steps: flops / the rate of the depthwise segment loop of the same kernel size and
    stride (with the clamp epilogue when an activation is fused);
  every step: memory time = the step's bytes (inputs and weights read once, outputs written
    once) / a bandwidth; layout conversions: their tensor read and written;
  A72 = the cortex-a57 model (LLVM has no A72 model; the A72's NEON issue is the A57's),
  A53 = the cortex-a53 model (pessimistic: it serializes loads behind older FMLAs), with the
  plan's kernel on both clusters (the A53 cluster runs the in-order variant where one exists,
  8x12__neonfma_a53, which this model rates lowest of all: its in-order write-back rule stalls
  exactly the load/FMLA pairing that schedule is built on, so the big-core kernel's figure
  stands in, an upper bound on the little cluster's time);
  all 6 cores: each step's work split between the clusters by the library's default ratio
    (capacity x threads; capacity = clock x ipc of luthier__core_kinds: A72 2.0, A53 1.0),
    the step ends when the slower cluster ends, plus a fork/join cost per step.
Not modelled: caches beyond L1 (llvm-mca assumes L1 hits), im2col gathers and packing beyond
their bytes, the front end, DVFS / thermal throttling, OS noise. The 'derated' columns scale
every loop's mca rate by --derate (an assumption, not a measurement). --winograd: what the 3x3
stride-1 convolutions would cost as Winograd F(6x6,3x3) (one 8x8 tile of 4 channels per
iteration of the rated transform loops; the transforms' memory traffic is not modelled).
"""
import argparse
import math
import sys

BIG = {"name": "A72", "model": "cortex-a57", "ghz": 1.8, "ipc": 2.0}
LITTLE = {"name": "A53", "model": "cortex-a53", "ghz": 1.4, "ipc": 1.0}
NCNN = {  # published ncnn fp32 figures on RK3399, ms: 1 big core, all 6, 2 big cores
    "resnet18": (176.9, 107.7, None),
    "resnet50": (504.2, 265.2, None),
    "mobilenet_v2": (79.2, 57.4, 51.8),
}


def read_mca(path):
    """{(loop, cpu): FMLA per cycle, (loop, cpu, "cyc"): cycles per iteration} from bench/mca_neon.sh"""
    rates = {}
    for line in open(path):
        t = line.split()
        if len(t) < 7 or line.startswith("#") or t[0] == "kernel":
            continue
        try:
            cyc, n = float(t[3]), int(t[4])
        except ValueError:
            continue
        if cyc > 0:
            rates[(t[0], t[1])] = n / cyc
            rates[(t[0], t[1], "cyc")] = cyc
    return rates


def dims(s):
    return [int(x) for x in s.split("x")] if s != "-" else []


def read_steps(path):
    """{model: [step dict]} from plan_steps' output"""
    models, cur = {}, None
    for line in open(path):
        if line.startswith("# model "):
            cur = line.split()[2]
            models[cur] = []
            continue
        t = line.rstrip("\n").split("\t")
        if cur is None or len(t) < 11:
            continue
        models[cur].append({"name": t[0], "op": t[1], "fused": t[2], "alg": t[3], "kernel": t[4],
                            "isa": t[5], "flops": float(t[6]), "bytes": float(t[7]),
                            "in": dims(t[8]), "w": dims(t[9]), "out": dims(t[10])})
    return models


def loop_of(st):
    """the mca row that rates a step's main loop, and the fraction of its FMLAs that are work"""
    if st["alg"] == "depthwise":
        k = st["w"][2] if len(st["w"]) == 4 else 3
        s = 2 if st["in"] and st["out"] and st["in"][2] > st["out"][2] else 1
        return "dw%d_s%d%s" % (k, s, "+clamp" if st["fused"] != "-" else ""), 1.0
    if st["kernel"] != "-":
        kern = st["kernel"].replace("luthier_sgemm_ukernel_", "")
        mr, nr = (int(x) for x in kern.split("__")[0].split("x"))
        out = st["out"]
        if len(out) == 4:  # NCHW: pixels x channels
            p, c = out[0] * out[2] * out[3], out[1]
        else:
            p, c = (math.prod(out[:-1]), out[-1]) if out else (mr, nr)
        used = (p * c) / (math.ceil(p / mr) * mr * math.ceil(c / nr) * nr)
        return kern, used
    return None, 1.0


def step_bytes(st):
    if st["op"] == "convert":  # layout conversion: bytes are not counted by the registry
        n = math.prod(st["out"]) if st["out"] else 0
        return 8.0 * n
    return st["bytes"]


def wino_time(st, core, rates, derate):
    """what-if: a 3x3 stride-1 conv as Winograd F(6x6,3x3): the GEMMs of the 64 positions at the
    step's kernel rate (partial tiles counted), plus the tile transforms at the wino_in / wino_out
    loop rates (one 8x8 tile of 4 channels per iteration); None when the step is not such a conv"""
    w, out = st["w"], st["out"]
    if st["alg"] != "im2col" or len(w) != 4 or w[2:] != [3, 3] or len(out) != 4 or st["in"][2:] != out[2:]:
        return None
    kern = st["kernel"].replace("luthier_sgemm_ukernel_", "")
    mr, nr = (int(x) for x in kern.split("__")[0].split("x"))
    k, c, tiles = w[0], w[1], math.ceil(out[2] / 6) * math.ceil(out[3] / 6) * out[0]
    fmla = 64 * math.ceil(tiles / mr) * mr * math.ceil(k / nr) * nr * c / 4  # 4-lane FMLAs
    hz = core["ghz"] * 1e9
    cyc = fmla / rates[(kern, core["model"])]
    cyc += tiles * math.ceil(c / 4) * rates[("wino_in", core["model"], "cyc")]
    cyc += tiles * math.ceil(k / 4) * rates[("wino_out", core["model"], "cyc")]
    return cyc / (derate * hz)


def core_time(st, core, rates, derate, bw, wino=False):
    """seconds of one core of this kind doing the whole step (compute, memory)"""
    loop, used = loop_of(st)
    tc = 0.0
    tw = wino_time(st, core, rates, derate) if wino else None
    if tw is not None:
        return tw, step_bytes(st) / bw
    if loop and st["flops"] > 0:
        r = rates.get((loop, core["model"]))
        if r is None:
            raise SystemExit("rk3399_estimate: no llvm-mca figure for %s on %s" % (loop, core["model"]))
        tc = st["flops"] / used / (r * derate * 8.0 * core["ghz"] * 1e9)
    return tc, step_bytes(st) / bw


def estimate(steps, rates, a):
    """ms for: 1 big core, 2 big cores, all 6 cores"""
    wb, wl = 2 * BIG["ghz"] * BIG["ipc"], 4 * LITTLE["ghz"] * LITTLE["ipc"]
    share_big = wb / (wb + wl)
    one = two = six = 0.0
    per = []
    for st in steps:
        tcb, tmb = core_time(st, BIG, rates, a.derate, a.bw_core, a.winograd)
        tcl, _ = core_time(st, LITTLE, rates, a.derate, a.bw_core, a.winograd)
        tm_all = step_bytes(st) / a.bw_all
        t1 = max(tcb, tmb)
        t2 = max(tcb / 2, tm_all) + a.sync_us * 1e-6
        t6 = max(share_big * tcb / 2, (1 - share_big) * tcl / 4, tm_all) + a.sync_us * 1e-6
        one, two, six = one + t1, two + t2, six + t6
        per.append((st, t1, t6))
    return one * 1e3, two * 1e3, six * 1e3, share_big, per


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mca", required=True, help="output of bench/mca_neon.sh")
    ap.add_argument("--steps", required=True, help="output of plan_steps (AArch64 plan)")
    ap.add_argument("--bw-core", type=float, default=3.5e9, help="bytes/s one A72 core streams (default 3.5e9)")
    ap.add_argument("--bw-all", type=float, default=4.5e9, help="bytes/s all cores stream (default 4.5e9)")
    ap.add_argument("--sync-us", type=float, default=10.0, help="fork/join cost per multi-core step, us (default 10)")
    ap.add_argument("--derate", type=float, default=0.75, help="fraction of the mca loop rate kept (derated columns)")
    ap.add_argument("--winograd", action="store_true",
                    help="what-if: 3x3 stride-1 im2col convs as Winograd F(6x6,3x3) (transforms at their mca rates)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--layers", action="store_true", help="per-step table too")
    a = ap.parse_args()
    rates, models = read_mca(a.mca), read_steps(a.steps)
    derate = a.derate
    rows = []
    for name, steps in models.items():
        a.derate = 1.0
        b1, b2, b6, share, _ = estimate(steps, rates, a)
        a.derate = derate
        d1, d2, d6, _, per = estimate(steps, rates, a)
        gf = sum(s["flops"] for s in steps) / 1e9
        rows.append((name, gf, b1, b2, b6, d1, d2, d6, NCNN.get(name, (None, None, None))))
        if a.layers:
            print("## %s (derated): step, loop, GFLOP, ms 1 big, ms 6 cores" % name)
            for st, t1, t6 in per:
                print("  %-28s %-22s %7.3f %8.3f %8.3f" % (st["name"], loop_of(st)[0] or st["op"],
                                                          st["flops"] / 1e9, t1 * 1e3, t6 * 1e3))
    fmt = lambda v: "%.1f" % v if v is not None else "-"
    hdr = ["network", "GFLOP", "1 big: mca", "2 big: mca", "6 cores: mca", "1 big: derated",
           "2 big: derated", "6 cores: derated", "ncnn 1 big", "ncnn 2 big", "ncnn 6 cores"]
    if a.markdown:
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
    else:
        print("  ".join("%-14s" % h for h in hdr))
    for name, gf, b1, b2, b6, d1, d2, d6, nc in rows:
        cells = [name, "%.2f" % gf, fmt(b1), fmt(b2), fmt(b6), fmt(d1), fmt(d2), fmt(d6),
                 fmt(nc[0]), fmt(nc[2]), fmt(nc[1])]
        print(("| " + " | ".join(cells) + " |") if a.markdown else "  ".join("%-14s" % c for c in cells))
    print("\n(ms; big share of each step on 6 cores: %.3f (library default ratio); derate %.2f; "
          "bandwidth %.1f GB/s one core, %.1f GB/s all; %.0f us fork/join per step)"
          % (share, derate, a.bw_core / 1e9, a.bw_all / 1e9, a.sync_us))
    return 0


if __name__ == "__main__":
    sys.exit(main())
