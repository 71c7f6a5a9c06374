[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
gunzip -c .bench/gpu_kernels.gz > .bench/gpu_kernels && chmod +x .bench/gpu_kernels
ROUNDS=2 REPS=3 bash bench/llama_server.sh > /tmp/llama.log 2>&1
cat $OUT/table.md
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
# The kernel tests one process each (one process opening a device per test ran out of adapters on this machine).
for t in $(.bench/gpu_kernels --list 2>/dev/null | sed -n 's/: test$//p' | grep -v every_kernel); do
  timeout 60 .bench/gpu_kernels --exact "$t" > /tmp/t.log 2>&1; echo "$t rc $?" >> $OUT/kernels.txt
done
cat $OUT/kernels.txt
