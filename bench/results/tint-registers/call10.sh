# Device call 10: which of Tint's constructs costs matmul_wide its registers (call 9: 162
# against naga's 123). Variants of main's module (`kindling shaders --key matmul_wide/f32`):
# v0 as is; v1 the store functions without early returns (Tint turns those into flags);
# v2 v1 with the step loop counted from 0 (a canonical for loop); v3 v0 with that loop
# only. Each through Dawn (tint_spirv.mjs: dump_shaders), spirv-as, pipeline_stats SPV=,
# beside naga's own SPIR-V of the same WGSL. Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
D=bench/results/tint-registers
for v in v0 v1 v2 v3; do
  bash .dawn/run.sh .dawn .ab6/tint_spirv.mjs matmul_wide .ab6/$v.wgsl > /tmp/$v.log 2>&1
  python3 $D/extract_spirv.py < /tmp/$v.log > /tmp/$v.spvasm
  .ab6/spirv-as --target-env vulkan1.3 /tmp/$v.spvasm -o /tmp/$v.spv 2>&1 | tail -2
  echo "== $v naga: $(WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tail -1)"
  echo "== $v tint: $(SPV=/tmp/$v.spv SPV_ENTRY=dawn_entry_point WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tail -1)"
done | tee $OUT/registers.txt
cd /tmp && tar czf $OUT/spirv.tgz v0.spvasm v1.spvasm v2.spvasm v3.spvasm v0.log
