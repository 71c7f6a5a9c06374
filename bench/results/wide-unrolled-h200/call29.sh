# Device call 29 (session 28): the integer-dot batch kernel (the browser's q/k/v/o) with its
# step's 4 runs written out (idot3u: constant run slots) against its loop (idot3), alone
# under Dawn at q/o's and k/v's shapes in 6 spans. Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  TILE=64 bash .dawn/run.sh .dawn $T matmul_tiled 512 1536 1536 6 .ab6/idot3.wgsl .ab6/idot3u.wgsl 2>&1 | grep -v "^ "
  TILE=64 bash .dawn/run.sh .dawn $T matmul_tiled 512 256 1536 6 .ab6/idot3.wgsl .ab6/idot3u.wgsl 2>&1 | grep -v "^ "
} | tee $OUT/times.txt
