# Device call 11: Tint's SPIR-V of v0 (call 10) edited by hand: the GLSL450 memory model
# instead of Vulkan's (NonPrivatePointer dropped, barrier semantics 264), the step loop's
# tint_loop_idx exit made never taken (OpBranchConditional on %false), and both.
# Carried: .ab6, .gl.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
for v in v0-glsl450 v0-noloopidx v0-glsl450-noloopidx; do
  echo "== $v: $(SPV=.ab6/$v.spv SPV_ENTRY=dawn_entry_point WGSL=.ab6/v0.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | grep -v XDG | tail -1)"
done | tee $OUT/registers.txt
