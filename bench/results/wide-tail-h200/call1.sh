# Device call 1 (session 36): matmul_wide alone under Dawn (Tint, robustness on, as a
# browser compiles it) at the 1.5B's long-prompt batches, over the spans a dot product
# splits into: does the last, part-empty wave of workgroups cost gate and up at 2,048
# rows (1,120 tiles, no split: 4.24 waves of 264), and would one dispatch over gate and
# up together (the same work as a 17,920-row panel) fill it? q/o and down at their
# spans around the rule's 6. The WGSL is `kindling shaders --key matmul_wide/f32
# --browser` of d8f6d04 with STEP_WRITTEN_OUT = 1 (the wasm build's value).
# Carried: .ab40 (wide.wgsl, dawn_kernel_time.mjs), .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
T=.ab40/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
W=.ab40/wide.wgsl
run() { bash .dawn/run.sh .dawn $T matmul_wide "$@" $W 2>&1 | grep -v "^$"; }
{
  for round in 1 2; do
    echo "== round $round"
    for s in 1 2 3; do run 2048 8960 1536 $s; done
    run 2048 17920 1536 1
    for s in 4 5 6 8; do run 2048 1536 1536 $s; done
    for s in 4 6 8 12; do run 2048 1536 8960 $s; done
    for s in 1 2; do run 1024 8960 1536 $s; done
    run 1024 17920 1536 1
  done
} | tee $OUT/call1-times.txt
