// A fresh app as a web developer writes it: the package by name, no options for the
// bundler. It generates a few tokens on the page's thread (Model) and in a Web Worker
// (WorkerModel, whose worker.js Vite must find and bundle by itself), there on two threads:
// the test serves the app cross-origin isolated, so the package's threaded build (and the
// pool workers it starts) must be bundled too. The model URL comes from the query (the
// test's model server).

import { Model } from 'kindling';
import { WorkerModel } from 'kindling/worker';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const url = params.get('model');
const options = { backend: params.get('backend') ?? 'cpu', cache: 'off' };
const generate = { maxTokens: 6, temperature: 0 };

async function run(Kind, out, extra = {}) {
  const model = await Kind.load(url, { ...options, ...extra });
  for await (const { text } of model.generate('The capital of France is', generate)) out.textContent += text;
  const info = model.info;
  await model.dispose();
  return info;
}

try {
  const main = await run(Model, $('main-out'));
  const worker = await run(WorkerModel, $('worker-out'), { threads: 2 });
  $('status').textContent = `done ${main.backend} ${worker.backend} worker threads ${worker.threads.count}`;
  if (worker.threads.count !== 2) console.warn(`kindling bundle app: ${worker.threads.reason}`);
} catch (e) {
  $('status').textContent = `failed: ${e.name}: ${e.message}`;
  console.error(e);
}
