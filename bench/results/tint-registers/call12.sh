# Device call 12: two more variants of main's matmul_wide module through the same steps as call 10:
# v4 the kk loop unrolled by hand (8 steps), v6 the products written as fma() calls.
# Each through Dawn (tint_spirv.mjs: dump_shaders), spirv-as, pipeline_stats SPV=,
# beside naga's own SPIR-V of the same WGSL. Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
D=bench/results/tint-registers
for v in v4 v6; do
  bash .dawn/run.sh .dawn .ab6/tint_spirv.mjs matmul_wide .ab6/$v.wgsl > /tmp/$v.log 2>&1
  python3 $D/extract_spirv.py < /tmp/$v.log > /tmp/$v.spvasm
  .ab6/spirv-as --target-env vulkan1.3 /tmp/$v.spvasm -o /tmp/$v.spv 2>&1 | tail -2
  echo "== $v naga: $(WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tail -1)"
  echo "== $v tint: $(SPV=/tmp/$v.spv SPV_ENTRY=dawn_entry_point WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tail -1)"
done | tee $OUT/registers.txt
cd /tmp && tar czf $OUT/spirv.tgz v4.spvasm v6.spvasm
