# Device call 13 (session 28): the driver's internal representations of matmul_wide, naga's
# and Tint's (pipeline_stats IR_DIR=, a temporary option, since dropped: NVIDIA's driver
# listed 0 internal representations), and three more variants of
# main's module (.ab6/v0.wgsl): vB without the next step's loads issued early (loads at
# the step's start); vC the epilogue as four plain stores a block; vD a 64 × 128 tile of
# 16 × 8 invocations (the same 8 × 8 block each, 96 loaders). Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
D=bench/results/tint-registers
for v in v0 vB vC vD; do
  bash .dawn/run.sh .dawn .ab6/tint_spirv.mjs matmul_wide .ab6/$v.wgsl > /tmp/$v.log 2>&1
  python3 $D/extract_spirv.py < /tmp/$v.log > /tmp/$v.spvasm
  .ab6/spirv-as --target-env vulkan1.3 /tmp/$v.spvasm -o /tmp/$v.spv 2>&1 | tail -2
  echo "== $v naga: $(IR_DIR=/tmp/ir IR_TAG=$v-naga WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tr '\n' ' ')"
  echo "== $v tint: $(IR_DIR=/tmp/ir IR_TAG=$v-tint SPV=/tmp/$v.spv SPV_ENTRY=dawn_entry_point WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tr '\n' ' ')"
done | tee $OUT/registers.txt
cd /tmp && tar czf $OUT/ir.tgz ir v0.spvasm vB.spvasm vC.spvasm vD.spvasm 2>&1 | tail -1
