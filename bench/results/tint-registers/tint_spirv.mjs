// Prints the SPIR-V Dawn's Tint writes for each WGSL file's entry point (Dawn's
// dump_shaders toggle), between "=== BEGIN FILE" and "=== END FILE" lines, for
// spirv-as and `pipeline_stats SPV=` (bench/results/tint-registers.md).
//   bash .dawn/run.sh .dawn tint_spirv.mjs ENTRY FILE.wgsl [FILE.wgsl ...]
import fs from 'node:fs';
import { createRequire } from 'node:module';

const [entry, ...files] = process.argv.slice(2);
const webgpu = createRequire(import.meta.url)(process.env.DAWN_WEBGPU_DIR ?? '/tmp/dawn-node/webgpu');
const gpu = webgpu.create(['enable-dawn-features=dump_shaders,disable_symbol_renaming']);
const adapter = await gpu.requestAdapter();
const device = await adapter.requestDevice({ requiredLimits: { maxStorageBuffersPerShaderStage: adapter.limits.maxStorageBuffersPerShaderStage, maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize } });
for (const file of files) {
  console.log(`=== BEGIN ${file}`);
  const module = device.createShaderModule({ code: fs.readFileSync(file, 'utf8') });
  const info = await module.getCompilationInfo();
  for (const m of info.messages) if (m.type === 'error') console.log(`error: ${m.message}`);
  await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: entry } });
  console.log(`=== END ${file}`);
}
device.destroy();
