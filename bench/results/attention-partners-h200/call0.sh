# Device call 0: register counts of main's (b090b3a) prefill kernels as NVIDIA's driver
# reports them (examples/pipeline_stats.rs, VK_KHR_pipeline_executable_properties).
# Carried: .ab1 (the pipeline_stats binary), .gl. Output: call0-stats-main.txt.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab1/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps; timeout 200 /tmp/ps 2>&1 | grep -v XDG | tee $OUT/stats.txt
