# Device call 21 (session 28): vK (vJ with 16 values a step, all 256 invocations loading)
# against vJ under Dawn; the integer-dot batch kernel (`kindling shaders --key
# matmul_tiled/q4_k/idot3`, the browser's q/k/v/o) timed alone at its splits, and its
# registers under Tint and naga (call 15's extraction of it failed: the log is kept here).
# Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
D=bench/results/tint-registers
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  bash .dawn/run.sh .dawn $T matmul_wide 512 8960 1536 4 .ab6/vJ.wgsl .ab6/vK.wgsl 2>&1
  bash .dawn/run.sh .dawn $T matmul_wide 512 1536 8960 16 .ab6/vJ.wgsl .ab6/vK.wgsl 2>&1
  bash .dawn/run.sh .dawn $T matmul_wide 512 1536 8960 8 .ab6/vJ.wgsl .ab6/vK.wgsl 2>&1
  for s in 1 3 6; do TILE=64 bash .dawn/run.sh .dawn $T matmul_tiled 512 1536 1536 $s .ab6/idot3.wgsl 2>&1; done
  for s in 3 6; do TILE=64 bash .dawn/run.sh .dawn $T matmul_tiled 512 256 1536 $s .ab6/idot3.wgsl 2>&1; done
  bash .dawn/run.sh .dawn .ab6/tint_spirv.mjs matmul_tiled .ab6/idot3.wgsl > /tmp/idot3.log 2>&1
  python3 $D/extract_spirv.py < /tmp/idot3.log > /tmp/idot3.spvasm
  .ab6/spirv-as --target-env vulkan1.3 /tmp/idot3.spvasm -o /tmp/idot3.spv 2>&1 | tail -2
  echo "== idot3 naga: $(WGSL=.ab6/idot3.wgsl ENTRY=matmul_tiled /tmp/ps 2>&1 | grep -v XDG | tail -1)"
  echo "== idot3 tint: $(SPV=/tmp/idot3.spv SPV_ENTRY=dawn_entry_point WGSL=.ab6/idot3.wgsl ENTRY=matmul_tiled /tmp/ps 2>&1 | grep -v XDG | tail -1)"
  grep -v "^ \|^%\|^;" /tmp/idot3.log | head -20
} | tee $OUT/times.txt
