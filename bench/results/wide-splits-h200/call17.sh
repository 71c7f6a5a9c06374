# Device call 17 (session 28): matmul_wide timed alone under Dawn (dawn_kernel_time.mjs:
# Tint's compile, zero-filled buffers, 20 dispatches a timestamped pass, median of 5),
# gate's shape (512 × 8,960 × 1,536 in 4 spans) and down's (512 × 1,536 × 8,960 in 8):
# v0 main's module (162 registers), vE with store4 by components (119), vJ vE with the
# workgroup tiles as [WK][WM / 4] arrays (the index clamps Tint adds then fall on the loop
# counter and the invariant tx / ty, not on every read's sum); then the same with Dawn's
# robustness off (what the clamps cost); vJ's registers. Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
D=bench/results/tint-registers
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  for toggles in "" disable_robustness; do
    echo "== toggles: ${toggles:-none}"
    DAWN_TOGGLES=$toggles bash .dawn/run.sh .dawn $T matmul_wide 512 8960 1536 4 .ab6/v0.wgsl .ab6/vE.wgsl .ab6/vJ.wgsl 2>&1
    DAWN_TOGGLES=$toggles bash .dawn/run.sh .dawn $T matmul_wide 512 1536 8960 8 .ab6/v0.wgsl .ab6/vE.wgsl .ab6/vJ.wgsl 2>&1
  done
  for v in vJ; do
    bash .dawn/run.sh .dawn .ab6/tint_spirv.mjs matmul_wide .ab6/$v.wgsl > /tmp/$v.log 2>&1
    python3 $D/extract_spirv.py < /tmp/$v.log > /tmp/$v.spvasm
    .ab6/spirv-as --target-env vulkan1.3 /tmp/$v.spvasm -o /tmp/$v.spv 2>&1 | tail -2
    echo "== $v naga: $(WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tail -1)"
    echo "== $v tint: $(SPV=/tmp/$v.spv SPV_ENTRY=dawn_entry_point WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tail -1)"
  done
} | tee $OUT/times.txt
