#!/usr/bin/env bash
# mca_neon.sh - static throughput of the NEON microkernels' main k-loops (llvm-mca).
#
#   bench/mca_neon.sh [--cpus cortex-a53,cortex-a57,neoverse-n1] [--cc gcc|clang] [--cflags "-O2"] [--depthwise-only]
#
# Every loop is rated on cortex-a53, cortex-a57 (LLVM's model for the A72 too) and neoverse-n1 at
# least: the three figures bench/rk3399_estimate.py reads (RK3399: 2x A72 + 4x A53).
# Builds a translation unit with the luthier implementation for AArch64 (once, to assembly), and for every kernel
# of the LUTHIER__UKERNELS_NEON list (luthier_kernels_neon.h) runs mca_kernel.py ($MCA_KERNEL)
# on its main loop (the LLVM-MCA-BEGIN/END region). Prints one table: kernel, core (llvm-mca
# scheduling model), cycles per loop iteration, FMLAs per iteration, FMLAs per cycle and % of
# the core's 128-bit FMLA peak (1/cycle on cortex-a57/a72/a53/a55, 2/cycle on neoverse-n1).
# Exit status 1 if a kernel is below TARGET_PCT (default 95) on a target core (cortex-a57,
# neoverse-n1); other cores (e.g. --cpus cortex-a53,cortex-a55,cortex-a72) are for information.
# Little-core kernels (an _a53 variant: in-order Cortex-A53/A55) are rated on LITTLE_CPUS
# instead (--little-cpus, default cortex-a55,cortex-a53): target TARGET_PCT on cortex-a55, whose
# model is optimistic (it lets Q-form FMLAs dual-issue: above 100% is possible), cortex-a53 for
# information (its model holds each load until the older FMLA has written back, so it rates
# the loads-between-FMLAs schedule of these kernels far below what the core does), and then
# checked against the in-order rules of bench/inorder_check.py (exit status 1 if one fails).
# The fp16 kernels (8x24__neonfp16, 6x32__neonfp16_hybrid) are rated on neoverse-n1 (target) and cortex-a55,
# their in-order twins 8x24__neonfp16_a55 and 6x32__neonfp16_hybrid_a55 on cortex-a55 (target) and
# neoverse-n1.
# The int8 USMMLA kernel (8x12__neoni8mm) is rated on neoverse-n2 (target) and neoverse-v1, the
# int8 SDOT kernel for in-order cores (8x12__neondot_a55) on cortex-a55 (target, optimistic
# model) and neoverse-n1 (information; the A53/A57 models' cores have no dotprod).
# Then the depthwise row kernels' segment loops (one group of pixels per iteration, >>depthwise):
# 3x3 and 5x5 at stride 1 and 2, plain (a0_c0: target DW_TARGET_PCT, default 85) and with the
# clamp epilogue (a0_c1: for information; its fmax/fmin share the vector pipes with FMLA).
# Then the fp16 depthwise segment loops (3x3 stride 1: target DWH16_TARGET_PCT on neoverse-n1) and
# the fp16 pixel routine's tap loop, then the int8 depthwise pixel routines' tap loops (smlal,
# SDOT), for information.
# Then, for information, the Winograd tile transforms (input: wino_in, output: wino_out; the
# loop with the most arithmetic: F(6x6,3x3), one 8x8 tile of 4 channels per iteration;
# FMLA/iter counts their FADD/FSUB/FMLA/FMUL) and the hand-written NEON of the uint8
# operators (one 16-element step: quantize, dequantize, qadd, max pool tap, mean tap; the
# count column then counts that loop's characteristic instruction, named in the kernel column).
#
# Needs aarch64-linux-gnu-gcc (or clang) and llvm-mca-19 (LLVM 19 has the real Neoverse-N1
# model; override with MCA=...). The tool's path can be overridden with MCA_KERNEL=...
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOL=${MCA_KERNEL:-$ROOT/../shared/tools/mca_kernel.py}
MCA=${MCA:-llvm-mca-19}
TARGET_PCT=${TARGET_PCT:-95}
DW_TARGET_PCT=${DW_TARGET_PCT:-85}
DWH16_TARGET_PCT=${DWH16_TARGET_PCT:-35}
CPUS=cortex-a53,cortex-a57,neoverse-n1
LITTLE_CPUS=cortex-a55,cortex-a53,cortex-a57
CC_KIND=gcc
CFLAGS="-O2"
DW_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
    --cpus) CPUS=$2; shift 2 ;;
    --little-cpus) LITTLE_CPUS=$2; shift 2 ;;
    --cc) CC_KIND=$2; shift 2 ;;
    --cflags) CFLAGS=$2; shift 2 ;;
    --depthwise-only) DW_ONLY=1; shift ;;
    -h | --help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "mca_neon.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -f "$TOOL" ] || { echo "mca_neon.sh: $TOOL not found (set MCA_KERNEL)" >&2; exit 2; }
command -v "$MCA" >/dev/null || { echo "mca_neon.sh: $MCA not found (apt-get install llvm-19, or set MCA)" >&2; exit 2; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf '#define LUTHIER_IMPLEMENTATION\n#include "luthier.h"\nint main(void) { return luthier_kernel_count() > 0 ? 0 : 1; }\n' > "$TMP/tu.c"
# one compile to assembly for every loop (mca_kernel.py reads a .s as it is)
case "$CC_KIND" in
gcc) CCCMD=aarch64-linux-gnu-gcc ;;
clang | clang-*) CCCMD="$CC_KIND --target=aarch64-linux-gnu" ;;
*) CCCMD=$CC_KIND ;;
esac
$CCCMD $CFLAGS -I"$ROOT" -S -fno-asynchronous-unwind-tables -o "$TMP/tu.s" "$TMP/tu.c" ||
    { echo "mca_neon.sh: compiling the translation unit failed" >&2; exit 2; }

# The kernels, in registry order, from the list macro.
KERNELS=$(sed -n 's/^ *X(\([A-Za-z0-9_]*\), "neon",.*/\1/p' "$ROOT/luthier_kernels_neon.h")
[ -n "$KERNELS" ] || { echo "mca_neon.sh: no kernels found in luthier_kernels_neon.h" >&2; exit 2; }

case "$CC_KIND" in
gcc) CCV=$(aarch64-linux-gnu-gcc -dumpfullversion 2>/dev/null || echo "?"); CCNAME="aarch64-linux-gnu-gcc $CCV" ;;
*) CCNAME="$CC_KIND" ;;
esac
echo "# bench/mca_neon.sh: $("$MCA" --version | sed -n 's/.*LLVM version \([0-9.]*\).*/llvm-mca \1/p'), $CCNAME $CFLAGS, main k-loop of each kernel (LLVM-MCA-BEGIN/END region), target >= $TARGET_PCT% on cortex-a57 and neoverse-n1; depthwise segment loops >= $DW_TARGET_PCT% (plain), +clamp for information"
printf '%-24s %-30s %9s %10s %11s %5s %10s\n' kernel "cpu (llvm-mca model)" cyc/iter FMLA/iter FMLA/cycle peak "% of peak"
fail=0
# rate NAME FUNCTION TARGET_PCT (0: for information) [CPUS [TARGET_CPUS [HOT]]]
# HOT: the mnemonics counted per iteration (and that pick the loop), default the FMA class
rate() {
    local k=$1 fn=$2 t=$3 cpus=${4:-$CPUS} tcpus=${5:-cortex-a57,neoverse-n1} hot=${6:-} out nfma line
    out=$(python3 "$TOOL" "$TMP/tu.s" "$fn" --mca "$MCA" --cpus "$cpus" ${hot:+--hot "$hot"}) ||
        { echo "$k: mca_kernel.py failed" >&2; fail=1; return; }
    nfma=$(printf '%s\n' "$out" | sed -n 's/^# per iteration: [0-9]* instructions, \([0-9]*\) FMA-class.*/\1/p')
    case "$fn" in luthier_sgemm_*)
        echo "$out" | grep -q "LLVM-MCA-BEGIN/END region" || echo "# warning: $k: no LLVM-MCA-BEGIN/END region, the tool guessed a loop" >&2 ;;
    esac
    # rows: cpu model cyc/iter IPC FMA/cyc ops/cyc docpeak ...
    while read -r cpu model cyc _ _ _ peak _; do
        line=$(awk -v k="$k" -v cpu="$cpu" -v model="$model" -v cyc="$cyc" -v n="$nfma" -v peak="$peak" -v t="$t" -v tc=",$tcpus," 'BEGIN {
            f = n / cyc; pct = 100 * f / peak;
            printf "%-24s %-30s %9.2f %10d %11.2f %5d %9.1f%%", k, cpu " (" model ")", cyc, n, f, peak, pct;
            if (index(tc, "," cpu ",") && t > 0 && pct < t) printf "  BELOW TARGET";
            if (cpu == "cortex-a55") printf "  (optimistic model)";
            if (cpu == "cortex-a53") printf "  (pessimistic model, information)";
            printf "\n" }')
        echo "$line"
        case "$line" in *"BELOW TARGET"*) fail=1 ;; esac
    done < <(printf '%s\n' "$out" | awk '$2 ~ /Model$/')
}
LITTLE=""
[ "$DW_ONLY" = 1 ] || for k in $KERNELS; do
    case "$k" in
    *_a53*) rate "$k" "luthier_sgemm_ukernel_$k" "$TARGET_PCT" "$LITTLE_CPUS" cortex-a55; LITTLE="$LITTLE $k" ;;
    *) rate "$k" "luthier_sgemm_ukernel_$k" "$TARGET_PCT" ;;
    esac
done
# depthwise segment kernels (the hottest loop: one group of pixels per iteration)
for ks in 3_s1 3_s2 5_s1 5_s2; do
    rate "dw${ks}" "luthier__dw_seg${ks}_a0_c0" "$DW_TARGET_PCT"
    rate "dw${ks}+clamp" "luthier__dw_seg${ks}_a0_c1" 0
done
# fp16 depthwise (>>dw-h16, Armv8.2 FP16: neoverse-n1, cortex-a55 for information): the segment
# loops (one group of 8 pixels x 8 channels per iteration, the widening epilogue included), 3x3
# stride 1 against DWH16_TARGET_PCT of the .8h FMLA peak on neoverse-n1 (default 35: the
# epilogue's FCVTL/FCVTL2/FCVTN/FCVTN2, 2 cycles each on V0 in the N1 model, take 64 cycles of
# a group, which bounds 3x3 near 47 %; a guard, not the fp32 loops' 85), the rest for
# information; then the pixel routine's tap loop (32 channels, one tap per iteration; its
# epilogue outside the loop), for information
for ks in 3_s1 3_s2 5_s1 5_s2; do
    case "$ks" in 3_s1) t=$DWH16_TARGET_PCT ;; *) t=0 ;; esac
    rate "dwh16_${ks}" "luthier__dw_h16_seg${ks}_a0_c0" "$t" neoverse-n1,cortex-a55 neoverse-n1
    rate "dwh16_${ks}+clamp" "luthier__dw_h16_seg${ks}_a0_c1" 0 neoverse-n1,cortex-a55 none
done
rate "dwh16_pixel(block32)" "luthier__dw_h16_block32" 0 neoverse-n1,cortex-a55 none
# int8 depthwise pixel routines (>>impl-qconv-dw), one step of the tap loop, for information:
# smlal (8 channels x 2 taps: 4 smlal/smlal2 = 16 multiply-adds per iteration; cores without
# dotprod) on cortex-a57, neoverse-n1 and cortex-a55; SDOT (16 channels x 4 taps: 4 sdot = 64 per
# iteration, the LLVM-MCA-BEGIN/END region) on neoverse-n1 and cortex-a55 (the a57 model has
# no dotprod). Multiply-adds per cycle: 4 x smlal/cycle, 16 x sdot/cycle.
rate "q8dw_neon(smlal)" "luthier__qdw_neon" 0 cortex-a57,neoverse-n1,cortex-a55 none 'smlal2?'
rate "q8dw_neondot(sdot)" "luthier__qdw_neondot" 0 neoverse-n1,cortex-a55 none 'sdot'
# fp16 Winograd F(4x4,3x3) products (>>wino16: 4 tiles x 16 outputs as two halves of 8, one group
# of 4 blocks of 8 channels per iteration: 128 FMUL/FMLA .8h, 12 FADD .8h adding the blocks'
# fp16 sums, then the 4 group sums widened and added into fp32), for information
[ "$DW_ONLY" = 1 ] || rate "wino16_4x16(fp16)" "luthier__wino16_4x8_neon" 0 neoverse-n1,cortex-a55 none
# Winograd F(6x6,3x3) tile transforms (8x8 tile, 4 channels per iteration), for information
if [ "$DW_ONLY" = 0 ]; then
    rate "wino_in" "luthier__wino_in_LUTHIER__W4" 0 "$CPUS" none 'fmla|fmls|fadd|fsub|fmul'
    rate "wino_out" "luthier__wino_out_LUTHIER__W4" 0 "$CPUS" none 'fmla|fmls|fadd|fsub|fmul'
fi
# uint8 operators (>>ops-u8-neon), one 16-element step, for information
if [ "$DW_ONLY" = 0 ]; then
    rate "u8_quantize(fcvtns)" "luthier__op_quantize_range_base" 0 "$CPUS" none 'fcvtns'
    rate "u8_dequantize(scvtf)" "luthier__op_dequantize_range_base" 0 "$CPUS" none 'scvtf'
    rate "u8_qadd(fcvtns)" "luthier__op_qadd_range_base" 0 "$CPUS" none 'fcvtns'
    rate "u8_maxpool_tap(umax)" "luthier__op_qmax_neon" 0 "$CPUS" none 'umax'
    rate "u8_mean16_tap(uaddw)" "luthier__u8n_sum16" 0 "$CPUS" none 'uaddw2?'
    rate "u8_mean32_tap(uaddw)" "luthier__u8n_sum32" 0 "$CPUS" none 'uaddw2?'
fi
# fp16-arithmetic kernels (F16 family, Armv8.2 FP16: not on A53/A57/A72): neoverse-n1 (target;
# each .8h FMLA is twice the fp32 work at the same rate), cortex-a55 for information
[ "$DW_ONLY" = 1 ] || rate "h8x24__neonfp16" "luthier_sgemm_ukernel_8x24__neonfp16" "$TARGET_PCT" cortex-a55,neoverse-n1 neoverse-n1
[ "$DW_ONLY" = 1 ] || rate "h6x32__neonfp16_hybrid" "luthier_sgemm_ukernel_6x32__neonfp16_hybrid" "$TARGET_PCT" cortex-a55,neoverse-n1 \
    neoverse-n1
# their twins for in-order cores: target on cortex-a55 (optimistic model), neoverse-n1 for information
if [ "$DW_ONLY" = 0 ]; then
    rate "h8x24__neonfp16_a55" "luthier_sgemm_ukernel_8x24__neonfp16_a55" "$TARGET_PCT" cortex-a55,neoverse-n1 cortex-a55
    LITTLE="$LITTLE 8x24__neonfp16_a55"
    rate "h6x32__neonfp16_hybrid_a55" "luthier_sgemm_ukernel_6x32__neonfp16_hybrid_a55" "$TARGET_PCT" cortex-a55,neoverse-n1 \
        cortex-a55
    LITTLE="$LITTLE 6x32__neonfp16_hybrid_a55"
fi
# int8 I8MM (USMMLA) kernel: neoverse-n2 is the closest llvm-19 model with i8mm (target);
# neoverse-v1 (4 vector pipes) for information
[ "$DW_ONLY" = 1 ] || rate "q8x12__neoni8mm" "luthier_qgemm_ukernel_8x12__neoni8mm" "$TARGET_PCT" \
    neoverse-n2,neoverse-v1 neoverse-n2
# int8 SDOT kernel for in-order cores: target on cortex-a55 (an optimistic model: it puts SDOT
# and ins on one FP ALU pipe and holds an instruction that would write back before an older
# SDOT, which the loop is scheduled around), neoverse-n1 for information
if [ "$DW_ONLY" = 0 ]; then
    rate "q8x12__neondot_a55" "luthier_qgemm_ukernel_8x12__neondot_a55" "$TARGET_PCT" cortex-a55,neoverse-n1 cortex-a55
    LITTLE="$LITTLE 8x12__neondot_a55"
fi
# the little-core kernels against the in-order issue rules
if [ -n "$LITTLE" ]; then
    python3 "$ROOT/bench/inorder_check.py" --cc "aarch64-linux-gnu-gcc" --cflags="$CFLAGS" $LITTLE || fail=1
fi
exit $fail
