# Device call 22 (session 28): the browser's decode kernels (as `kindling shaders --key`
# gives them; the keys Dawn's trace of a decode names) and the integer-dot batch kernel,
# registers under naga and Tint, looking for another module Tint compiles far larger
# (matmul_wide's store: calls 13–15); then the integer-dot batch kernel timed alone under
# Dawn at q/o's and k/v's shapes. Carried: .ab6 (dec/, idot3.wgsl), .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
regs() { grep -o "Register Count=[0-9]*" | head -1 | cut -d= -f2; }
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  for pair in dec/matvec_gated_normed_q4_k_int128:matvec_gated dec/matvec_multi_normed_q4_k_int128:matvec_multi \
      dec/matvec_q4_k_int128:matvec dec/matvec_q4_k_int1_staged:matvec dec/matvec_q6_k_int1_staged:matvec \
      dec/attention:attention_rope dec/attention:attn_combine dec/attention:attention_tiled idot3:matmul_tiled; do
    f=.ab6/${pair%%:*}.wgsl; e=${pair##*:}
    bash .dawn/run.sh .dawn .ab6/tint_spirv.mjs $e $f > /tmp/t.log 2>&1
    rm -f /tmp/t.spv; python3 .ab6/extract_spirv.py < /tmp/t.log > /tmp/t.spvasm
    .ab6/spirv-as --target-env vulkan1.3 /tmp/t.spvasm -o /tmp/t.spv 2>&1 | tail -1
    echo "$pair naga $(WGSL=$f ENTRY=$e /tmp/ps 2>&1 | regs) tint $(SPV=/tmp/t.spv SPV_ENTRY=dawn_entry_point WGSL=$f ENTRY=$e /tmp/ps 2>&1 | regs)"
    grep "^error" /tmp/t.log | head -2
  done
  for s in 1 3 6; do TILE=64 bash .dawn/run.sh .dawn $T matmul_tiled 512 1536 1536 $s .ab6/idot3.wgsl 2>&1 | grep -v "^ "; done
  for s in 3 6; do TILE=64 bash .dawn/run.sh .dawn $T matmul_tiled 512 256 1536 $s .ab6/idot3.wgsl 2>&1 | grep -v "^ "; done
} | tee $OUT/registers.txt
