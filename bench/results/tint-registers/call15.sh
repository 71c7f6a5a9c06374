# Device call 15 (session 28): every browser kernel the store and load fixes touch
# (components named, no v[j] in a loop: matmul_tiled.wgsl's store4 and store1,
# matmul_int.wgsl's, matmul.wgsl's x4, attention.wgsl's output and v4), main's module
# (old_) against the new (new_), registers under Tint and naga. The modules are
# `kindling shaders --key K` of each tree. Carried: .ab6 (k2/), .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
D=bench/results/tint-registers
regs() { grep -o "Register Count=[0-9]*" | head -1 | cut -d= -f2; }
for pair in matmul_wide_q4_k:matmul_wide matmul_wide_q6_k:matmul_wide matmul_tiled_q6_k:matmul_tiled \
    matmul_tiled_q4_k:matmul_tiled matmul_tiled_q4_k_idot3:matmul_tiled matmul_tiled_q4_k:matvec \
    matmul_tiled_q4_k:matvec_gated matmul_tiled_q4_k:matvec_multi attention:attention \
    attention:attention_rope attention:attention_tiled; do
  m=${pair%%:*}; e=${pair##*:}
  for b in old new; do
    f=.ab6/k2/${b}_$m.wgsl
    bash .dawn/run.sh .dawn .ab6/tint_spirv.mjs $e $f > /tmp/t.log 2>&1
    python3 $D/extract_spirv.py < /tmp/t.log > /tmp/t.spvasm
    .ab6/spirv-as --target-env vulkan1.3 /tmp/t.spvasm -o /tmp/t.spv 2>&1 | tail -2
    echo "$m $e $b naga $(WGSL=$f ENTRY=$e /tmp/ps 2>&1 | regs) tint $(SPV=/tmp/t.spv SPV_ENTRY=dawn_entry_point WGSL=$f ENTRY=$e /tmp/ps 2>&1 | regs)"
  done
done | tee $OUT/registers.txt
