# Device call 6: call 5's kernel tests were cut at 240 s after 9 of 31 (call 4, on the same
# tests with the f32 kernels in their place, took 81 s): the matmul and panel tests alone,
# one at a time, with their progress printed.
set -u
R=$OUT
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
( time timeout 420 /tmp/gk panel --test-threads 1 --nocapture ) > $R/call6-gpu_kernels.txt 2>&1
grep -v XDG $R/call6-gpu_kernels.txt | tail -60
