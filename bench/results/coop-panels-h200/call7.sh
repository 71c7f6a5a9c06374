# Device call 7 (the machine of call 6, still warm): all of tests/gpu_kernels.rs on the
# H200 with a longer limit than call 5's 240 s. Carried: .ab (the test binary), .gl.
for f in .gl/*.deb; do dpkg -x $f / ; done >/dev/null 2>&1; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
xz -dc .ab/gpu_kernels.xz > /tmp/gk; chmod +x /tmp/gk
( time timeout 400 /tmp/gk 2>&1 ) > $OUT/call7-gpu_kernels.txt 2>&1
grep -v XDG $OUT/call7-gpu_kernels.txt | grep "test \|result\|real\|panicked\|gated panels" | tail -45
