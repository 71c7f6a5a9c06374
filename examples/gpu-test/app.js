// The test page: capabilities, a load with a progress bar, streamed tokens and tok/s.
// It imports the package straight from the repository (no bundler).

import { Model } from '../../www/index.js';

const $ = (id) => document.getElementById(id);
let model = null;
let loadAbort = null;
let runAbort = null;

function showError(where, e) {
  where.innerHTML = '';
  const span = document.createElement('span');
  span.className = 'error';
  span.textContent = `${e.name}: ${e.message}`;
  where.append(span);
}

Model.capabilities().then(
  (caps) => ($('caps').textContent = JSON.stringify(caps, null, 2)),
  (e) => showError($('caps'), e),
);

$('load').onclick = async () => {
  if (model) await model.dispose();
  model = null;
  const file = $('file').files[0];
  const source = file ?? new URL($('url').value, location.href);
  loadAbort = new AbortController();
  $('abort').disabled = false;
  $('load').disabled = true;
  $('info').textContent = 'loading…';
  const start = performance.now();
  try {
    model = await Model.load(source, {
      backend: $('backend').value,
      signal: loadAbort.signal,
      onProgress: ({ phase, loaded, total }) => {
        $('progress').max = total ?? loaded ?? 1;
        $('progress').value = loaded;
        $('info').textContent = `${phase}: ${(loaded / 2 ** 20).toFixed(1)} / ${total ? (total / 2 ** 20).toFixed(1) : '?'} MiB`;
      },
    });
    const ms = performance.now() - start;
    $('info').textContent = `loaded in ${ms.toFixed(0)} ms\n${JSON.stringify(model.info, null, 2)}`;
    $('run').disabled = false;
    $('dispose').disabled = false;
  } catch (e) {
    showError($('info'), e);
  } finally {
    $('abort').disabled = true;
    $('load').disabled = false;
  }
};

$('abort').onclick = () => loadAbort?.abort();

$('dispose').onclick = async () => {
  await model?.dispose();
  model = null;
  $('info').textContent = 'disposed.';
  $('run').disabled = true;
  $('dispose').disabled = true;
};

$('run').onclick = async () => {
  if (!model) return;
  runAbort = new AbortController();
  $('run').disabled = true;
  $('stop').disabled = false;
  $('out').textContent = '';
  const options = {
    maxTokens: Number($('max').value),
    temperature: Number($('temp').value),
    signal: runAbort.signal,
  };
  const prompt = $('chat').checked
    ? model.applyChatTemplate([{ role: 'user', content: $('prompt').value }])
    : $('prompt').value;
  const promptTokens = model.tokenize(prompt, { parseSpecial: $('chat').checked }).length;
  const start = performance.now();
  let first = null;
  let tokens = 0;
  try {
    for await (const piece of model.generate($('chat').checked ? model.tokenize(prompt, { parseSpecial: true }) : prompt, options)) {
      first ??= performance.now();
      if (piece.tokenId !== null) tokens++;
      $('out').textContent += piece.text;
      const decodeS = (performance.now() - first) / 1e3;
      $('stats').textContent =
        `${tokens} tokens; prefill ${promptTokens} tokens in ${(first - start).toFixed(0)} ms ` +
        `(${(promptTokens / ((first - start) / 1e3)).toFixed(1)} tok/s); ` +
        `decode ${tokens > 1 ? ((tokens - 1) / decodeS).toFixed(1) : '–'} tok/s [${model.info.backend}]`;
    }
  } catch (e) {
    if (e.name !== 'AbortError') showError($('stats'), e);
  } finally {
    $('run').disabled = false;
    $('stop').disabled = true;
  }
};

$('stop').onclick = () => runAbort?.abort();
