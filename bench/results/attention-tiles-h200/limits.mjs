// Prints the WebGPU adapter's name and the limit attention_tiled's tiles of 32 need.
const a = await navigator.gpu.requestAdapter();
console.log(JSON.stringify({ adapter: a.info?.description ?? a.info?.vendor, maxComputeWorkgroupStorageSize: a.limits.maxComputeWorkgroupStorageSize }));
