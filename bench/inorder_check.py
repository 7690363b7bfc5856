#!/usr/bin/env python3
"""inorder_check.py - does a NEON microkernel's main loop suit an in-order dual-issue core?

    bench/inorder_check.py [KERNEL ...] [--min-dist N] [--mul-cycles M] [--cc CC] [--cflags "..."] [--show-loop]

Cortex-A53 and Cortex-A55 (the little cores of big.LITTLE boards: RK3399, RK3588, S905,
Snapdragon 6xx/7xx) issue at most two instructions per cycle, strictly in program order: an
instruction that waits for a register stalls everything behind it, and there is no reordering
to hide a load's latency. The A53 cannot issue a 128-bit (Q-register) load beside a Q-form
FMLA, and a 128-bit load takes the load pipe for two cycles; a 64-bit load ("ldr d", "ldr x")
or an "ins" can issue in the same cycle as an FMLA. So the fp32/int8 kernels written for these
cores (the style of Arm Compute Library's a53/a55 GEMM kernels) obey three rules, which this
script checks on the main loop of each kernel:

  R1 no wide loads:  no load of more than 64 bits in the loop (ldr q, ldp q, ldp d, ldp x,
                     ld1 {v.4s}, ...). A q register arrives as "ldr d" (low half) plus
                     "ldr x" + "ins v.d[1], x" (high half).
  R2 pairing:        every instruction that is not an FMLA-class instruction (fmla, sdot,
                     smmla, smlal, ...) directly follows one, so that the pair can issue together:
                     no two non-FMLA instructions are adjacent (the loop wraps around: its
                     last instruction is followed by its first).
  R3 loads ahead:    each load (and each ins) is at least N instructions (--min-dist,
                     default 6: about 3 cycles of load-to-use latency at 2 instructions per
                     cycle) before the first instruction that reads its destination register,
                     counting around the loop (a load for the next iteration is far ahead).
                     A lane load ("ld1 {v.d}[1], [x]": the high half of a q register, loaded
                     in the load pipe instead of through ldr x + ins) merges into its
                     destination, so it reads it: the low half ("ldr d", immediate or
                     register offset) must be N instructions ahead of it too. An integer
                     multiply (madd, msub, mul, [su]maddl, ...: 3-4 cycles on these cores, where
                     an add takes 1; a pointer or loop counter stepped by madd) is at least M
                     FMLA-class instructions (--mul-cycles, default 4; the core issues one
                     Q-form FMLA or SDOT a cycle, so that many cycles) before the first
                     instruction that reads its result.

The main loop is the region between the "// LLVM-MCA-BEGIN" and "// LLVM-MCA-END" markers
that every NEON kernel carries (the region bench/mca_neon.sh rates), cut out of the kernel's
function in the assembly that aarch64-linux-gnu-gcc -O2 -S makes of the library. These rules
are a static model, not a measurement: llvm-mca's cortex-a55 model rates the same loops (and
is optimistic: it lets Q-form FMLAs dual-issue); the only proof is a run on a board.

Kernels: short registry names (8x12__neonfma_a53, 8x12__neondot, ...); default: every fp32
and int8 NEON kernel of the registries. Kernels whose name has an _a53 or _a55 variant are
the in-order kernels and must pass; the others (for out-of-order big cores) are shown with
the reasons they fail. Exit status: 0 when every in-order kernel passes, 1 otherwise,
2 on a usage or build error.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOT = re.compile(r"^(fmla|fmls|sdot|udot|usdot|sudot|smmla|ummla|usmmla|bfdot|bfmmla|[su]mlal2?)$")
# integer multiplies (general registers): results 3-4 cycles after issue on the in-order cores
IMUL = re.compile(r"^(madd|msub|mul|mneg|[su]maddl|[su]msubl|[su]mull|[su]mnegl|[su]mulh)$")
# instructions whose first operand is read as well as written
READS_DEST = re.compile(r"^(fmla|fmls|sdot|udot|usdot|sudot|smmla|ummla|usmmla|bfdot|bfmmla|ins|mla|mls|"
                        r"[su]mlal2?|[su]mlsl2?|[su]adalp|bsl|bif|bit|st.*|cmp|cmn|tst|cbn?z|tbn?z)$")
REG = re.compile(r"(?<![\w.])([vqdshbxw])(\d{1,2})(?!\w)")
WIDTH = {"q": 16, "d": 8, "x": 8, "s": 4, "w": 4, "h": 2, "b": 1}


def die(msg):
    print("inorder_check: " + msg, file=sys.stderr)
    sys.exit(2)


def registry_kernels():
    """(short name, function) of every NEON fp32, fp16 and int8 registry row."""
    out = []
    with open(os.path.join(ROOT, "luthier_kernels_neon.h")) as f:
        for m in re.finditer(r'^\s*X\((\w+), "neon(?:fp16)?",', f.read(), re.M):
            out.append((m.group(1), "luthier_sgemm_ukernel_" + m.group(1)))
    with open(os.path.join(ROOT, "luthier_int8.h")) as f:
        for m in re.finditer(r'^\s*X\((\w+), "neon[\w]*",', f.read(), re.M):
            out.append((m.group(1), "luthier_qgemm_ukernel_" + m.group(1)))
    return out


def build_asm(cc, cflags):
    with tempfile.TemporaryDirectory() as tmp:
        tu = os.path.join(tmp, "tu.c")
        with open(tu, "w") as f:
            f.write('#define LUTHIER_IMPLEMENTATION\n#include "luthier.h"\n'
                    "int main(void) { return luthier_kernel_count() > 0 ? 0 : 1; }\n")
        cmd = cc.split() + cflags.split() + ["-I" + ROOT, "-S", "-fno-asynchronous-unwind-tables",
                                             "-o", "-", tu]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            die("compile failed: %s\n%s" % (" ".join(cmd), r.stderr))
        return r.stdout


def main_loop(asm, func):
    """The instructions between the LLVM-MCA markers in func (None when absent)."""
    lines = asm.splitlines()
    start = next((i for i, l in enumerate(lines) if re.match(r"^%s:" % re.escape(func), l)), None)
    if start is None:
        return None
    body, inside = [], False
    for l in lines[start + 1:]:
        if re.match(r"^\s*\.size\s+%s\b" % re.escape(func), l):
            break
        if "LLVM-MCA-BEGIN" in l:
            inside, body = True, []
            continue
        if "LLVM-MCA-END" in l:
            return body
        if not inside:
            continue
        t = l.split("//")[0].strip()
        if not t or t.endswith(":") or t.startswith(".") or t.startswith("#"):
            continue
        body.append(re.sub(r"\s+", " ", t))
    return None


def operands(ins):
    parts = ins.split(" ", 1)
    if len(parts) == 1:
        return parts[0], []
    ops, depth, cur = [], 0, ""
    for ch in parts[1]:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    ops.append(cur.strip())
    return parts[0], ops


def regs(text):
    return ["%s%s" % ("x" if k in "xw" else "v", n) for k, n in REG.findall(text)]


def classify(ins):
    """(kind, bytes loaded, registers written, registers read); kind: hot, load, ins, other."""
    mn, ops = operands(ins)
    if mn.startswith("ld") and not mn.startswith("ldxr"):
        if mn.startswith("ld1") or mn.startswith("ld2") or mn.startswith("ld3") or mn.startswith("ld4"):
            lst = ops[0]
            dests = regs(lst)
            if mn.startswith("ld1r") or "[" in lst.split("}")[-1] or re.search(r"\}\[\d+\]", lst):
                size = {"b": 1, "h": 2, "s": 4, "d": 8}.get((re.findall(r"\.\d*([bhsd])", lst) or ["s"])[0], 4)
                if not mn.startswith("ld1r"):  # one lane: the other lanes of the destination stay
                    return "load", size, dests, dests + regs(" ".join(ops[1:]))
            else:
                lanes = re.findall(r"\.(\d+)([bhsd])", lst)
                size = sum(int(n) * {"b": 1, "h": 2, "s": 4, "d": 8}[t] for n, t in lanes) or 16 * len(dests)
            return "load", size, dests, regs(" ".join(ops[1:]))
        nd = 2 if mn.startswith("ldp") or mn.startswith("ldnp") else 1
        first = ops[0][0]
        w = WIDTH.get(first, 8)
        if mn in ("ldrb", "ldrsb", "ldurb", "ldursb"):
            w = 1
        elif mn in ("ldrh", "ldrsh", "ldurh", "ldursh"):
            w = 2
        elif mn in ("ldrsw", "ldursw"):
            w = 4
        return "load", w * nd, regs(",".join(ops[:nd])), regs(",".join(ops[nd:]))
    if HOT.match(mn):
        return "hot", 0, regs(ops[0]), regs(",".join(ops))
    if mn == "ins" or (mn == "mov" and ops and re.search(r"\.[bhsd]\[\d+\]$", ops[0]) and ops[1][0] in "xw"):
        return "ins", 0, regs(ops[0]), regs(",".join(ops))
    if IMUL.match(mn):
        return "imul", 0, regs(ops[0]), regs(",".join(ops[1:]))
    if mn.startswith("b") and not mn.startswith("bi") and not mn.startswith("bs") and mn not in ("bic",):
        return "other", 0, [], []
    if READS_DEST.match(mn):
        return "other", 0, [] if mn.startswith("st") or mn in ("cmp", "cmn", "tst") else regs(ops[0]), regs(",".join(ops))
    return "other", 0, regs(ops[0]) if ops else [], regs(",".join(ops[1:]))


def check(body, min_dist, mul_cycles):
    """Per rule, the list of violations (strings)."""
    n = len(body)
    info = [classify(x) for x in body]
    r1, r2, r3 = [], [], []
    for i, (kind, size, wr, rd) in enumerate(info):
        if kind == "load" and size > 8:
            r1.append("%3d  %-40s loads %d bytes" % (i, body[i], size))
        if kind != "hot" and info[i - 1][0] != "hot":
            r2.append("%3d  %-40s follows '%s' (no FMLA to pair with)" % (i, body[i], body[i - 1]))
        if kind in ("load", "ins", "imul"):
            for r in wr:
                for d in range(1, n + 1):
                    j = (i + d) % n
                    if r in info[j][3]:
                        if kind == "imul":
                            hot = sum(1 for e in range(1, d) if info[(i + e) % n][0] == "hot")
                            if hot < mul_cycles:
                                r3.append("%3d  %-40s %s first read %d FMLA-class instruction%s later by '%s'"
                                          % (i, body[i], r, hot, "" if hot == 1 else "s", body[j]))
                        elif d < min_dist:
                            r3.append("%3d  %-40s %s first read %d instruction%s later by '%s'"
                                      % (i, body[i], r, d, "" if d == 1 else "s", body[j]))
                        break
                    if r in info[j][2] and info[j][0] != "hot":
                        break  # rewritten before any read
    return info, r1, r2, r3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kernels", nargs="*", help="short registry names (default: every NEON kernel)")
    ap.add_argument("--min-dist", type=int, default=6, help="R3: instructions from a load to its first use")
    ap.add_argument("--mul-cycles", type=int, default=4,
                    help="R3: FMLA-class instructions from an integer multiply to its first use")
    ap.add_argument("--cc", default="aarch64-linux-gnu-gcc")
    ap.add_argument("--cflags", default="-O2")
    ap.add_argument("--show-loop", action="store_true", help="print each main loop")
    ap.add_argument("--max-lines", type=int, default=4, help="violations shown per rule")
    a = ap.parse_args()
    table = registry_kernels()
    if a.kernels:
        names = dict(table)
        for k in a.kernels:
            if k not in names:
                die("no NEON kernel %s in the registries" % k)
        table = [(k, names[k]) for k in a.kernels]
    asm = build_asm(a.cc, a.cflags)
    print("# bench/inorder_check.py: %s %s, main loop (LLVM-MCA-BEGIN/END region); R1 no load wider than "
          "64 bits, R2 every non-FMLA instruction directly after an FMLA, R3 loads >= %d instructions "
          "and integer multiplies >= %d FMLAs before first use" % (a.cc, a.cflags, a.min_dist, a.mul_cycles))
    bad = 0
    for short, func in table:
        body = main_loop(asm, func)
        little = re.search(r"_a5[35](_|$)", short) is not None
        if not body:
            print("%-30s no LLVM-MCA-BEGIN/END region (not built for this target?)" % short)
            bad += little
            continue
        info, r1, r2, r3 = check(body, a.min_dist, a.mul_cycles)
        cnt = lambda k: sum(1 for x in info if x[0] == k)
        loads64 = sum(1 for x in info if x[0] == "load" and x[1] <= 8)
        ok = not (r1 or r2 or r3)
        verdict = "PASS" if ok else ("FAIL" if little else "fails (big-core kernel)")
        print("%-30s %-24s %3d instr, %3d FMLA-class, %2d loads <= 64 bit, %2d ins | R1 %2d  R2 %2d  R3 %2d"
              % (short, verdict, len(body), cnt("hot"), loads64, cnt("ins"), len(r1), len(r2), len(r3)))
        if a.show_loop:
            for i, x in enumerate(body):
                print("      %3d  %s" % (i, x))
        for name, lst in (("R1 wide load", r1), ("R2 unpaired", r2), ("R3 too close", r3)):
            for v in lst[:a.max_lines]:
                print("    %-13s %s" % (name, v))
            if len(lst) > a.max_lines:
                print("    %-13s ... %d more" % (name, len(lst) - a.max_lines))
        if little and not ok:
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
