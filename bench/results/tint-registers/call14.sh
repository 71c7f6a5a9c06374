# Device call 14 (session 28): the epilogue variants (call 13 found the store functions cost
# Tint 45 registers). vE: store4 without a dynamic component index; vF: one test for
# the whole tile, the general store4 path only where it fails; vH: both.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
D=bench/results/tint-registers
for v in ${VARIANTS:-vE vF vH}; do
  bash .dawn/run.sh .dawn .ab6/tint_spirv.mjs matmul_wide .ab6/$v.wgsl > /tmp/$v.log 2>&1
  python3 $D/extract_spirv.py < /tmp/$v.log > /tmp/$v.spvasm
  .ab6/spirv-as --target-env vulkan1.3 /tmp/$v.spvasm -o /tmp/$v.spv 2>&1 | tail -2
  echo "== $v naga: $(IR_TAG=$v-naga WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tr '\n' ' ')"
  echo "== $v tint: $(IR_TAG=$v-tint SPV=/tmp/$v.spv SPV_ENTRY=dawn_entry_point WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tr '\n' ' ')"
done | tee $OUT/registers.txt
cd /tmp && tar czf $OUT/spirv.tgz *.spvasm 2>&1 | tail -1
