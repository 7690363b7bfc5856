#!/usr/bin/env python3
"""h6x32_a55_sched.py - schedules the main loop of 6x32__neonfp16_hybrid_a55 (luthier_kernels_neon.h).

    bench/h6x32_a55_sched.py            prints the C macros (LUTHIER__H6x32L_BLOCK, _FIRST)
    bench/h6x32_a55_sched.py --write    writes them into luthier_kernels_neon.h (>>f16-hybrid-a55)
    bench/h6x32_a55_sched.py --check    exit status 1 unless the rules hold and the header has them

The loop is one 8-step block of the fp16 hybrid 6x32 tile (192 `fmla C.8h, B.8h, A.h[lane]`,
groups g = 4 * step + column of six FMLAs, one B vector each). The register plan is fixed here
(24 accumulators leave v0-v7):
  A, steps 0-3 (set X): v0 = rows 0,1  v1 = rows 2,3  v2 = rows 4,5   (row 2i lanes 0-3: its
  A, steps 4-7 (set Y): v3 = rows 0,1  v4 = rows 2,3  v0 = rows 4,5    4 k steps, row 2i+1 lanes 4-7)
  B: v5 v6 v7 in rotation, v3 for group 4 (free until set Y is loaded) and v1 for group 20
     (free after set X's last read): 32 groups, every register reloaded across two groups or more.
v0 turns over twice: group 15 reads rows 0,1 (set X) first and group 16 reads rows 4,5 (set Y)
last; group 31 reads rows 4,5 first and group 0 reads rows 0,1 last.
Each q register arrives as "ldr d" (low half) + "ldr x" into a general register + "ins v.d[1]".
The script places every load, ins, pointer add and the loop count in the slots after the FMLAs
(one a slot: rule R2 of bench/inorder_check.py), each load and ins at least 6 instructions
before the first instruction that reads its register (R3), most constrained first (where the
slots between are still empty, it counts on them being filled, and puts an ldr x there), and
assigns the general registers; then it checks the loop with bench/inorder_check.py's rules. Loads for the next block (its set X and first B vectors) are marked NX:
the last block runs without them and the prologue (_FIRST) makes them for the first block.
The order of the k steps into each accumulator is the one of 6x32__neonfp16_hybrid.
"""
import os
import sys

MIN_DIST = 6
NF = 192
# the general registers for the high halves: x12, x13 of the frame and x6, x7, x14, x15, the
# kernel's own clobbers (LUTHIER__H6x32_KERNEL(..._a55, ...) names them)
GP = ["x6", "x7", "x12", "x13", "x14", "x15"]


def a_reg(step, row):
    """(register, lane) of row `row` at k step `step` (0-7)."""
    if step < 4:
        reg = ["v0", "v1", "v2"][row // 2]
    else:
        reg = ["v3", "v4", "v0"][row // 2]
    return reg, step % 4 + 4 * (row % 2)


B_REG = ["v5", "v6", "v7", "v5", "v3", "v6", "v7", "v5", "v6", "v7", "v5", "v6", "v7", "v5", "v6", "v7",
         "v5", "v6", "v7", "v5", "v1", "v6", "v7", "v5", "v6", "v7", "v5", "v6", "v7", "v5", "v6", "v7"]
ROW_ORDER = {15: [0, 1, 2, 3, 4, 5], 16: [0, 1, 2, 3, 4, 5], 31: [4, 5, 0, 1, 2, 3], 0: [2, 3, 4, 5, 0, 1]}


def fmlas():
    out = []  # (acc, b, a, lane, group)
    for g in range(32):
        step, col = g // 4, g % 4
        for row in ROW_ORDER.get(g, range(6)):
            a, lane = a_reg(step, row)
            out.append(("v%d" % (8 + 4 * row + col), B_REG[g], a, lane, g))
    return out


F = fmlas()


def reads(i):
    """registers FMLA i (unrolled index, any integer) reads as multiplicands."""
    f = F[i % NF]
    return (f[1], f[2])


def last_read_before(reg, u):
    i = u - 1
    while reg not in reads(i):
        i -= 1
    return i


class Chain:
    """one q register value: ldr d (low half at ptr_lo + off), ldr x (high half), ins."""

    def __init__(self, name, reg, lo, hi, off, use):
        self.name, self.reg, self.lo, self.hi, self.off, self.use = name, reg, lo, hi, off, use
        self.rel = last_read_before(reg, use)  # the previous value's last read (WAR)


def chains():
    out = []
    for g in range(32):  # B vector g at b + 16 g
        out.append(Chain("B%d" % g, B_REG[g], "b", "b", 16 * g, 6 * g))
    first = {}
    for i in range(NF):
        for r in F[i][2:3]:
            step = F[i][4] // 4
            key = (r, step >= 4)
            first.setdefault(key, i)
    for (reg, rows, off, half) in (("v0", (0, 1), 0, 0), ("v1", (2, 3), 0, 0), ("v2", (4, 5), 0, 0),
                                   ("v3", (0, 1), 8, 1), ("v4", (2, 3), 8, 1), ("v0", (4, 5), 8, 1)):
        use = first[(reg, bool(half))]
        out.append(Chain("A%s%d" % (reg, half), reg, "x%d" % rows[0], "x%d" % rows[1], off, use))
    return out



def show(slots, a, b):
    """slots a..b-1 as text (for the error messages)."""
    return " ".join("%d:%s" % (s, (slots[s % NF][0] + (slots[s % NF][1].name if len(slots[s % NF]) > 1 and
                     hasattr(slots[s % NF][1], "name") else "")) if slots[s % NF] else "-") for s in range(a, b))


def schedule():
    """slots[s]: the instruction after FMLA s (None: empty); returns slots, the chains, placements."""
    slots = [None] * NF
    cs = {c.name: c for c in chains()}
    place = {}  # chain name -> (ldd, ldx, ins), unrolled slots

    def put(s, ins):
        assert slots[s % NF] is None, (s, ins, slots[s % NF])
        slots[s % NF] = ins

    def filled(a, b):
        return sum(1 for s in range(a, b) if slots[s % NF] is not None)

    def dist(a, b):  # instructions from slot a to slot b (b > a), slots filled so far
        return (b - a) + filled(a + 1, b)

    def dist_f(a, i):  # instructions from slot a to FMLA i (i > a)
        return (i - a) + filled(a + 1, i)

    # fixed: the loop control, and v0's two turnovers (its ldr d right after the last read of the
    # old value, its ins three slots on; between them the steps of b and x4/x5, and the subs)
    put(NF - 1, ("bne",))
    put(NF - 3, ("subs",))
    put(NF - 4, ("add", "b"))
    c = cs["Av00"]
    put(c.rel, ("ldd", c)), put(c.rel + 3, ("ins", c))
    place[c.name] = [c.rel, None, c.rel + 3]
    c = cs["Av01"]
    put(c.rel, ("ldd", c)), put(c.rel + 1, ("add", "x4")), put(c.rel + 2, ("add", "x5")), put(c.rel + 3, ("ins", c))
    place[c.name] = [c.rel, None, c.rel + 3]
    need = []  # (a, b): an empty slot strictly between slots a and b must be filled
    for c in sorted(cs.values(), key=lambda c: (c.use - c.rel, c.use)):
        if c.name in place:
            continue
        pick = None
        for optimistic in (False, True):  # optimistic: count empty slots between as filled
            extra = (lambda a, b: sum(1 for s in range(a + 1, b) if slots[s % NF] is None)) if optimistic \
                else (lambda a, b: 0)
            mid = (c.rel + c.use) // 2 - MIN_DIST
            order = range(c.rel, c.use) if c.use - c.rel < 30 else sorted(range(c.rel, c.use), key=lambda s: abs(s - mid))
            for ldd in order:
                if slots[ldd % NF] is not None:
                    continue
                for ins in range(ldd + 1, c.use):
                    if slots[ins % NF] is None and dist(ldd, ins) + extra(ldd, ins) >= MIN_DIST and \
                            dist_f(ins, c.use) + extra(ins, c.use) >= MIN_DIST:
                        ldxs = [s for s in range(ins - 24, ins) if s != ldd and slots[s % NF] is None and
                                dist(s, ins) + extra(s, ins) + (1 if s < ldd else 0) >= MIN_DIST]
                        if ldxs:
                            pick = (ldd, ins, ldxs[-1])
                            break
                if pick:
                    break
            if pick:
                break
        if not pick:
            sys.exit("h6x32_a55_sched: no slots for %s (window %d..%d)" % (c.name, c.rel, c.use))
        ldd, ins, ldx = pick
        put(ldd, ("ldd", c)), put(ins, ("ins", c)), put(ldx, ("ldx", c))
        place[c.name] = [ldd, ldx, ins]
        for a, b in ((ldd, ins), (ldx, ins), (ins, c.use)):
            short = MIN_DIST - (dist(a, b) if b != c.use else dist_f(a, b))
            for _ in range(max(0, short)):
                need.append((a, b))
    # ldr x: into a needed slot where one is in reach, else the latest free slot at least
    # MIN_DIST instructions before the ins
    for name, pl in sorted(place.items(), key=lambda kv: kv[1][2] - kv[1][0]):
        c = cs[name]
        if pl[1] is not None:
            continue
        cands = [s for s in range(pl[2] - 24, pl[2]) if slots[s % NF] is None and dist(s, pl[2]) >= MIN_DIST]
        wanted = [s for s in cands if any(a < s < b and (filled(a + 1, b) < MIN_DIST) for a, b in need)]
        if not cands:
            sys.exit("h6x32_a55_sched: no ldr x slot for %s %s: %s" % (name, pl, show(slots, pl[2] - 20, pl[2] + 1)))
        s = wanted[-1] if wanted else cands[-1]
        put(s, ("ldx", c))
        pl[1] = s
    # the row pointer steps x0-x3: after this block's set Y loads (rows at +8), before the next
    # block's set X loads read them (those then take offset 0)
    for xr in ("x0", "x1", "x2", "x3"):
        last = max(p for n, pl in place.items() for p, part in zip(pl, ("lo", "hi", "lo"))
                   if n.endswith("1") and n.startswith("A") and getattr(cs[n], part) == xr)
        s = next(s for s in range(last + 1, NF) if slots[s] is None)
        put(s, ("add", xr))
    return slots, cs, place


def gp_assign(slots, place):
    """a general register for each chain's ldr x .. ins (cyclic intervals, first fit)."""
    busy = {x: [False] * NF for x in GP}
    out = {}
    for name, (ldd, ldx, ins) in sorted(place.items(), key=lambda kv: kv[1][1] % NF):
        span = [s % NF for s in range(ldx, ins + 1)]
        for x in GP:
            if not any(busy[x][s] for s in span):
                for s in span:
                    busy[x][s] = True
                out[name] = x
                break
        else:
            sys.exit("h6x32_a55_sched: out of general registers at %s" % name)
    return out


def wrap(lead, items, width=108):
    """macro lines of at most `width` columns, a backslash after them."""
    lines, cur = [], lead
    for it in items:
        if len(cur) + len(it) + 1 > width and cur.strip():
            lines.append(cur)
            cur = " " * len(lead)
        cur += ("" if cur.endswith(" ") else " ") + it
    lines.append(cur)
    return ["%-*s \\" % (width, l) for l in lines]


def emit(slots, cs, place, gp):
    """(loop body lines, prologue lines): C macro pieces, one per instruction."""
    adds = {ins[1]: s for s, ins in enumerate(slots) if ins and ins[0] == "add"}

    def where(c, part):
        return place[c.name][("ldd", "ldx", "ins").index(part)]

    def offset(c, part, s):
        ptr = c.lo if part == "ldd" else c.hi
        step = 512 if ptr == "b" else 16
        nx = s < 0
        base = c.off + (8 if part == "ldx" and ptr == "b" else 0)
        after = s % NF > adds[ptr]
        o = base + (step if nx else 0) - (step if after else 0)
        assert o >= 0, (c.name, part, s, o)
        return o, base

    def text(c, part, s, prologue=False):
        n = c.reg[1:]
        if part == "ins":
            return "LUTHIER__INSD(%s, %s)" % (n, gp[c.name])
        ptr = c.lo if part == "ldd" else c.hi
        o, base = offset(c, part, s)
        if prologue:
            o = base
        if ptr == "b":
            if part == "ldd":
                return "LUTHIER__LDD(%s, b, %d)" % (n, o)
            return "LUTHIER__LDX(%s, b, %d)" % (gp[c.name], o - 8)
        if part == "ldd":
            return "LUTHIER__6x16L_LDDA(%s, %s, %d)" % (n, ptr, o)
        return "LUTHIER__6x16L_LDXA(%s, %s, %d)" % (gp[c.name], ptr, o)

    body, first = [], []
    for i in range(NF):
        acc, b, a, lane, g = F[i]
        body.append((g, "LUTHIER__FMLAH(%s, %s, %s, %d)" % (acc, b[1:], a[1:], lane)))
        line = None
        ins = slots[i]
        if ins is not None:
            if ins[0] == "bne":
                line = 'LC("b.ne .Lluthier_h6x32a55_k8_%=\\n\\t")'
            elif ins[0] == "subs":
                line = 'LC("subs x10, x10, #1\\n\\t")'
            elif ins[0] == "add":
                line = '"add %s, %s, #%d\\n\\t"' % ((("%[b]", "%[b]", 512) if ins[1] == "b" else (ins[1], ins[1], 16)))
            else:
                part, c = ins[0], ins[1]
                s = where(c, part)
                t = text(c, part, s)
                if s < 0:
                    t = "NX(%s)" % t
                    first.append((s % NF, text(c, part, s, True)))
                line = t
        if line:
            body.append((g, line))
    first.sort()
    return body, [t for _, t in first]


def verify(slots, cs, place, gp):
    """the rules of bench/inorder_check.py on the loop as text."""
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import inorder_check as ic
    body = []
    for i in range(NF):
        acc, b, a, lane, g = F[i]
        body.append("fmla %s.8h, %s.8h, %s.h[%d]" % (acc, b, a, lane))
        ins = slots[i]
        if ins is None:
            continue
        if ins[0] == "bne":
            body.append("b.ne .L1")
        elif ins[0] == "subs":
            body.append("subs x10, x10, #1")
        elif ins[0] == "add":
            r = "x20" if ins[1] == "b" else ins[1]
            body.append("add %s, %s, #16" % (r, r))
        else:
            part, c = ins
            ptr = "x20" if (c.lo if part == "ldd" else c.hi) == "b" else (c.lo if part == "ldd" else c.hi)
            if part == "ldd":
                body.append("ldr d%s, [%s, #0]" % (c.reg[1:], ptr))
            elif part == "ldx":
                body.append("ldr %s, [%s, #8]" % (gp[c.name], ptr))
            else:
                body.append("ins %s.d[1], %s" % (c.reg, gp[c.name]))
    info, r1, r2, r3 = ic.check(body, MIN_DIST, 4)
    for r in r1 + r2 + r3:
        print("rule:", r, file=sys.stderr)
    return not (r1 or r2 or r3), len(body)


def generate():
    """the C macros of the block and its prologue, and whether the rules hold."""
    slots, cs, place = schedule()
    gp = gp_assign(slots, place)
    ok, n = verify(slots, cs, place, gp)
    free = sum(1 for s in slots if s is None)
    print("# %d instructions, %d empty slots, rules %s" % (n, free, "pass" if ok else "FAIL"), file=sys.stderr)
    body, first = emit(slots, cs, place, gp)
    out = ["%-108s \\" % "#define LUTHIER__H6x32L_BLOCK(NX, LC)"]
    for g in range(32):
        out += wrap("    /* %-2d */ " % g, [l for gg, l in body if gg == g])
    out[-1] = out[-1].rstrip(" \\")
    out.append("/* The loads NX makes for the first block, in the same order (B from b, A pairs from x0-x5). */")
    out.append("%-108s \\" % "#define LUTHIER__H6x32L_FIRST")
    out += wrap("    ", first)
    out[-1] = out[-1].rstrip(" \\")
    return "\n".join(out), ok


def main():
    text, ok = generate()
    header = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "luthier_kernels_neon.h")
    if "--write" in sys.argv or "--check" in sys.argv:
        with open(header) as f:
            src = f.read()
        a, b = src.index("#define LUTHIER__H6x32L_BLOCK"), src.index("\n\n#define LUTHIER__H6x32L_K8")
        if "--check" in sys.argv:
            same = src[a:b] == text
            print("# luthier_kernels_neon.h: the block %s the generated one" % ("is" if same else "is NOT"),
                  file=sys.stderr)
            return 0 if ok and same else 1
        with open(header, "w") as f:
            f.write(src[:a] + text + src[b:])
        return 0 if ok else 1
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
