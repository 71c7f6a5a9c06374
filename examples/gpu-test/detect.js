// Detection: what WebGPU offers here, as a table that says what each figure means for
// Kindling, and which of the models the tests use fit this GPU's limits.

import { bytes } from '../shared/format.js';

/** The models the tests use: file size and largest tensor (read from the files with the PyPI gguf reader). */
export const MODELS = [
  { name: 'SmolLM2-135M Q4_1', file: 'SmolLM2-135M-Instruct.Q4_1.gguf', size: 98362432, largest: ['token_embd.weight', 30081024] },
  { name: 'Gemma-3-270M Q4_K_M', file: 'gemma-3-270m-q4_k_m.gguf', size: 253113024, largest: ['token_embd.weight', 178257920] },
  { name: 'Qwen2.5-Coder-0.5B Q4_K_M', file: 'qwen2.5-coder-0.5b-instruct-q4_k_m.gguf', size: 491400064, largest: ['output.weight', 144643072] },
  { name: 'Qwen2.5-Coder-1.5B Q4_K_M', file: 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', size: 1117320768, largest: ['output.weight', 191439360] },
];

/** The adapter as one line: "vendor / architecture / description" (the parts it reports). */
export function adapterName(a) {
  return [a?.vendor, a?.architecture, a?.description].filter(Boolean).join(' / ');
}

/** A software (CPU) adapter such as SwiftShader: WebGPU runs there, but slowly. */
export function isSoftware(a) {
  return !!a && (a.isFallbackAdapter || /swiftshader/i.test(`${a.description} ${a.architecture}`));
}

function row(tbody, what, here, meaning, cls = '') {
  const tr = tbody.insertRow();
  tr.dataset.what = what;
  // A long limit name may break before each capital (maxStorage·Buffer·Binding·Size) on a phone.
  tr.insertCell().append(...what.split(/(?=[A-Z][a-z])/).flatMap((part, i) => (i ? [document.createElement('wbr'), part] : [part])));
  for (const [text, c] of [[here, cls], [meaning, '']]) {
    const td = tr.insertCell();
    td.textContent = text;
    if (c) td.className = c;
  }
}

/** Fills the detection and fit tables from `Model.capabilities()`'s answer. */
export function showCapabilities(caps, $) {
  const tbody = $('detect-table').tBodies[0];
  tbody.replaceChildren();
  const summary = $('detect-summary');
  if (!caps.webgpu) {
    summary.className = 'summary bad';
    summary.textContent = `No WebGPU here (${caps.reason ?? 'no adapter'}). Models run on the CPU path (WebAssembly${caps.simd128 ? ' with SIMD128' : ''}); the kernel tests need WebGPU.`;
    row(tbody, 'WebGPU', 'unavailable', caps.reason ?? 'navigator.gpu.requestAdapter() gave no adapter', 'fail');
    row(tbody, 'CPU path', caps.simd128 ? 'WebAssembly + SIMD128' : 'WebAssembly', 'Models load into WebAssembly memory (at most 4 GiB for weights, KV cache and activations).');
    fitTable($, null);
    return;
  }
  const a = caps.adapter ?? {};
  const lim = caps.limits ?? {};
  const software = isSoftware(a);
  summary.className = software ? 'summary' : 'summary ok';
  summary.textContent = software
    ? `WebGPU on a software adapter (${a.description || a.architecture || 'fallback'}): the kernels run, slowly; backend 'auto' picks the CPU path here.`
    : `WebGPU on ${adapterName(a)}: backend 'auto' uses it.`;
  row(tbody, 'Adapter', adapterName(a) || '(not reported)',
    software ? 'A software (CPU) adapter: correct but slow; auto prefers the WebAssembly path.' : 'A hardware adapter: models run on it.',
    software ? '' : 'pass');
  const has = (f) => caps.features.includes(f);
  row(tbody, 'shader-f16', has('shader-f16') ? 'yes' : 'no',
    has('shader-f16') ? 'Half-precision arithmetic is available to the kernels.' : 'Kernels compute in f32 (the same results, no f16 speed-up).');
  row(tbody, 'subgroups', has('subgroups') ? 'listed' : 'no',
    'The browser kernels reduce through workgroup memory either way (wgpu offers subgroups only natively).');
  const binding = lim.maxStorageBufferBindingSize;
  row(tbody, 'maxStorageBufferBindingSize', bytes(binding),
    `Largest weight one kernel binding sees; larger tensors are split by rows (e.g. Qwen2.5-1.5B's ${bytes(191439360)} output.weight → ${Math.ceil(191439360 / binding)} part(s)).`);
  row(tbody, 'maxBufferSize', bytes(lim.maxBufferSize), 'Largest single GPU buffer: weight parts, the KV cache of one layer and activations each stay below it.');
  row(tbody, 'maxComputeWorkgroupStorageSize', bytes(lim.maxComputeWorkgroupStorageSize),
    'Workgroup memory for reductions and the attention tile; Kindling needs 16 KiB.');
  row(tbody, 'maxComputeInvocationsPerWorkgroup', String(lim.maxComputeInvocationsPerWorkgroup),
    'Kindling uses up to 256 invocations per workgroup (the WebGPU default minimum).');
  row(tbody, 'maxStorageBuffersPerShaderStage', String(lim.maxStorageBuffersPerShaderStage),
    'Buffers one kernel binds (fused decode kernels bind weights, inputs and outputs together); 8 or more needed.');
  row(tbody, 'WebAssembly SIMD128', caps.simd128 ? 'yes' : 'no', 'The CPU fallback path uses 128-bit SIMD dot products.');
  fitTable($, lim);
}

/** Which of the test models fit: the largest tensor against the binding and buffer limits. */
function fitTable($, lim) {
  const tbody = $('fit-table').tBodies[0];
  tbody.replaceChildren();
  for (const m of MODELS) {
    const tr = tbody.insertRow();
    const [tensor, size] = m.largest;
    let verdict = 'CPU path only (no WebGPU)';
    if (lim) {
      const parts = Math.ceil(size / lim.maxStorageBufferBindingSize);
      verdict = parts > 1 ? `fits: ${tensor} split in ${parts} bindings` : 'fits: every tensor in one binding';
      if (size / parts > lim.maxBufferSize) verdict = `does not fit: ${tensor} exceeds maxBufferSize`;
    }
    for (const text of [m.name, bytes(m.size), `${tensor} ${bytes(size)}`, verdict]) tr.insertCell().textContent = text;
  }
}
