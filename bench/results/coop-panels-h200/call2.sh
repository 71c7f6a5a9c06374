# Device call 2: the GEMM probe on the shapes call 1 did not reach (the 128 × 256, 64-value
# variant, over the 48 KiB of workgroup memory, stopped it), and where the cooperative-matrix
# prefill attention's time goes: op_timing builds of attention_coop.wgsl with one part taken
# out each (timing probes: their results are wrong), at chunk starts 0 and 3,584.
# Carried: .ab (probe, op_timing builds), .gl.
set -u
R=$OUT; export OUT=/tmp/o; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab/coop_gemm_probe.xz > /tmp/probe; chmod +x /tmp/probe
timeout 200 /tmp/probe 2>&1 | grep -v XDG > $R/call2-probe.txt
for v in base nosoftmax nokv nov nomma; do xz -dc .ab/ot-$v.xz > /tmp/ot-$v; chmod +x /tmp/ot-$v; done
for round in 1 2; do
  for v in base nosoftmax nokv nov nomma; do
    echo "== $v round $round"
    PER_KERNEL=1 DEVICE=1 QWEN_ONLY=1 PREFILL_ONLY=1 ATTN_STARTS="0 3584" timeout 100 /tmp/ot-$v 512 2>&1 | grep -i "attention\|AttnCombine\|KvStore"
  done
done > $R/call2-attention.txt 2>&1
cat $R/call2-probe.txt $R/call2-attention.txt
