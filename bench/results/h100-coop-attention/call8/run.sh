[ -e /work/wt ] || { mkdir -p /work && ln -s "$PWD" /work/wt; }
mkdir -p /tmp/b8 && tar xzf .bench/pack8.tgz -C /tmp/b8 && cp /tmp/b8/* .bench/ && tar xzf .bench/synthetic.tgz -C .bench || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export KINDLING_SYNTHETIC_DIR=$PWD/.bench/synthetic
timeout 200 .bench/gpu_e2e --test-threads 2 --nocapture tiny > $OUT/e2e.txt 2>&1; echo "e2e rc $?" >> $OUT/e2e.txt
grep -E "test result|rc |positions of|panicked" $OUT/e2e.txt | cut -c1-260
