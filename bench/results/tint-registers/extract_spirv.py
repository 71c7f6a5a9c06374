# Reads a Dawn log with dump_shaders on (stdin) and writes the last SPIR-V disassembly in
# it (Tint's module for the pipeline made) to stdout, without Dawn's "info:" lines.
import sys

lines, current, last = sys.stdin.read().splitlines(), None, []
for line in lines:
    if line.startswith("/* Dumped SPIRV disassembly */"):
        current = []
    elif current is not None and (line.startswith("// Dumped") or line.startswith("===")):
        last, current = current, None
    elif current is not None and not line.startswith("info:"):
        current.append(line)
out = current if current is not None else last
print("\n".join(out))
