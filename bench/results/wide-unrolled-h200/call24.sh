# Device call 24 (session 28): vA, vU's unrolled steps as 8 calls of one function over an
# array of 16 accumulators (constant indices once inlined), against vJ and vU; gate's and down's shapes at
# the rule's spans; their registers under Tint. Carried: .ab6, .gl, .dawn.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab6/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps
regs() { grep -o "Register Count=[0-9]*" | head -1 | cut -d= -f2; }
T=.ab6/dawn_kernel_time.mjs   # bench/results/wide-splits-h200/dawn_kernel_time.mjs
{
  bash .dawn/run.sh .dawn $T matmul_wide 512 8960 1536 4 .ab6/vJ.wgsl .ab6/vU.wgsl .ab6/vA.wgsl 2>&1
  bash .dawn/run.sh .dawn $T matmul_wide 512 1536 8960 16 .ab6/vJ.wgsl .ab6/vU.wgsl .ab6/vA.wgsl 2>&1
  for v in vA; do
    bash .dawn/run.sh .dawn .ab6/tint_spirv.mjs matmul_wide .ab6/$v.wgsl > /tmp/t.log 2>&1
    rm -f /tmp/t.spv; python3 .ab6/extract_spirv.py < /tmp/t.log > /tmp/t.spvasm
    .ab6/spirv-as --target-env vulkan1.3 /tmp/t.spvasm -o /tmp/t.spv 2>&1 | tail -1
    echo "$v naga $(WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | regs) tint $(SPV=/tmp/t.spv SPV_ENTRY=dawn_entry_point WGSL=.ab6/$v.wgsl ENTRY=matmul_wide /tmp/ps 2>&1 | regs)"
  done
} | tee $OUT/times.txt
