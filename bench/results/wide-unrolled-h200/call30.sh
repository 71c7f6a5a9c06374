# Device call 30 (session 28): the integer-dot batch kernel's step through run_products:
# natively (op_timing, naga: the loop, as native builds have it) main's against the new,
# taking turns; under Dawn main's module (idot3) against the new one with
# STEP_WRITTEN_OUT = 1 (idot3s1, as the wasm build has it) and call 29's idot3u.
# Carried: .ab6, .ab7, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
for v in int-old int-new; do xz -dc .ab7/op_timing-$v.xz > /tmp/ot-$v; chmod +x /tmp/ot-$v; done
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  for v in int-old int-new int-old int-new; do
    echo "== $v"
    PER_KERNEL=1 NO_COOP=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 timeout 100 /tmp/ot-$v 512 2>&1 | grep "MatmulTiled Q4K"
  done
  TILE=64 bash .dawn/run.sh .dawn $T matmul_tiled 512 1536 1536 6 .ab6/idot3.wgsl .ab6/idot3s1.wgsl .ab6/idot3u.wgsl 2>&1 | grep -v "^ "
  TILE=64 bash .dawn/run.sh .dawn $T matmul_tiled 512 256 1536 6 .ab6/idot3.wgsl .ab6/idot3s1.wgsl .ab6/idot3u.wgsl 2>&1 | grep -v "^ "
} | tee $OUT/times.txt
