# Device call 5: register counts of the prefill kernels as the engine builds them by
# default (an f32 KV cache), with cooperative matrices and as a browser gets them (no
# subgroups, no f16), from the final build (examples/pipeline_stats.rs). Carried: .ab1, .gl.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab1/pipeline_stats.xz > /tmp/ps; chmod +x /tmp/ps; timeout 200 /tmp/ps 2>&1 | grep -v XDG | tee $OUT/call5-stats.txt
