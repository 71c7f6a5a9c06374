# Sourced by the device scripts (bench/h100.sh, bench/dawn.sh) on the lent GPU machine:
# unpacks the Vulkan loader and glvnd carried in .gl/ (the machine lacks them), points
# Vulkan at NVIDIA's driver, and rebuilds the two models from their carried headers as
# noise weights of the real shapes (/tmp/smollm2.gguf, /tmp/gemma3.gguf): timing only. Their
# F32 tensors get ordinary values (bench/sane_floats.py), else norms make activations subnormal.
# MODELS (default "smollm2 gemma3") names the headers to expand (.bench/NAME.hdr -> /tmp/NAME.gguf);
# STUB_DIR (default .bench) is where the headers and gguf_stub.py are (bench/embed.sh: .embed).
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && [ -z "${VK_DRIVER_FILES:-}" ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
nvidia-smi -L > "$OUT/gpu.txt" 2>&1
for m in ${MODELS:-smollm2 gemma3}; do
  python3 ${STUB_DIR:-.bench}/gguf_stub.py expand ${STUB_DIR:-.bench}/$m.hdr /tmp/$m.gguf > /dev/null || exit 1
  # No subnormal norm weights (CPU timing); SmolLM2's small ones keep llama.cpp's logits finite.
  range=""; [ "$m" = smollm2 ] && range="0.02 0.06"
  python3 bench/sane_floats.py /tmp/$m.gguf $range > /dev/null || exit 1
done
