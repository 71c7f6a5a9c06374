// The chat demo: pick a model, load it into a Web Worker (WorkerModel) with download
// progress, and chat with streamed replies through the OpenAI-shaped
// `chat.completions.create({ stream: true })`. Public package API only.

import { WorkerModel } from '../../www/worker-model.js';
import { bytes, progressLine } from '../shared/format.js';

/** The models the tests use (tests/scripts/fetch_models.sh puts them under .cache/models). */
const MODELS = [
  { label: 'SmolLM2 135M (Q4_1)', url: '../../.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf', size: 98362432 },
  { label: 'Gemma 3 270M (Q4_K_M)', url: '../../.cache/models/gemma-3-270m-q4_k_m.gguf', size: 253113024 },
  { label: 'Qwen2.5 Coder 0.5B (Q4_K_M)', url: '../../.cache/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf', size: 491400064 },
  { label: 'Qwen2.5 Coder 1.5B (Q4_K_M)', url: '../../.cache/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', size: 1117320768 },
];

const $ = (id) => document.getElementById(id);
let model = null;
let messages = [];
let replying = null; // the AbortController of the reply being streamed

const absolute = (url) => (url.startsWith('hf:') ? url : new URL(url, location.href).href);

function selectedUrl() {
  const value = $('model').value;
  return value === 'custom' ? $('custom-url').value.trim() : value;
}

/** Fills the model list, each entry saying whether it is cached in this browser. */
async function fillModels() {
  const keep = $('model').value;
  const options = await Promise.all(MODELS.map(async (m) => {
    const cached = await WorkerModel.cache.has(absolute(m.url)).catch(() => false);
    return new Option(`${m.label} — ${bytes(m.size)}${cached ? ' · cached' : ''}`, m.url);
  }));
  $('model').replaceChildren(...options, new Option('Another model (URL)…', 'custom'));
  if (keep) $('model').value = keep;
  $('custom-row').hidden = $('model').value !== 'custom';
}

function setStatus(text, bad = false) {
  $('status').textContent = text;
  $('status').className = bad ? 'muted bad' : 'muted';
}

function setBusy({ loading = false, streaming = false } = {}) {
  $('load').disabled = loading || streaming;
  $('model').disabled = loading || streaming;
  $('input').disabled = !model || loading;
  $('send').disabled = !model || loading || streaming;
  $('stop').disabled = !streaming;
  $('input').placeholder = model ? 'Message (Enter sends, Shift+Enter for a new line)' : 'Load a model first';
}

async function load() {
  const url = selectedUrl();
  if (!url) return setStatus('Enter a model URL first.', true);
  setBusy({ loading: true });
  if (model) {
    const old = model;
    model = null;
    await old.dispose();
  }
  const cached = await WorkerModel.cache.has(absolute(url)).catch(() => false);
  setStatus(cached ? 'In this browser’s cache: loading from storage…' : 'Not cached: downloading (kept for next time)…');
  $('progress').hidden = false;
  const start = performance.now();
  try {
    model = await WorkerModel.load(absolute(url), {
      backend: $('backend').value,
      onProgress: (p) => {
        $('progress').max = p.total ?? Math.max(p.loaded, 1);
        $('progress').value = p.loaded;
        setStatus(progressLine(p));
      },
    });
    const info = model.info;
    const where = info.backend === 'webgpu' ? `WebGPU (${info.adapter?.description || info.adapter?.vendor || 'GPU'})` : 'the CPU (WebAssembly)';
    setStatus(`${info.name || info.architecture} ready on ${where} in ${((performance.now() - start) / 1e3).toFixed(1)} s` +
      (info.fallbackReason ? ` — not WebGPU because ${info.fallbackReason}` : ''));
    document.body.dataset.backend = info.backend;
  } catch (e) {
    setStatus(`Could not load the model: ${e.name}: ${e.message}`, true);
  } finally {
    $('progress').hidden = true;
    setBusy();
    fillModels();
  }
}

function bubble(role, text) {
  const div = document.createElement('div');
  div.className = `msg ${role}`;
  div.textContent = text;
  $('log').append(div);
  div.scrollIntoView({ block: 'end' });
  return div;
}

async function send(text) {
  if (!model || !text.trim()) return;
  bubble('user', text);
  messages.push({ role: 'user', content: text });
  const system = $('system').value.trim();
  const reply = bubble('assistant', '');
  reply.classList.add('streaming');
  replying = new AbortController();
  setBusy({ streaming: true });
  let content = '';
  let first = null;
  let usage = null;
  let finish = null;
  try {
    const stream = await model.chat.completions.create({
      messages: system ? [{ role: 'system', content: system }, ...messages] : messages,
      stream: true,
      max_tokens: Number($('max-tokens').value) || 128,
      temperature: Number($('temperature').value),
      signal: replying.signal,
    });
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta?.content;
      if (piece) {
        first ??= performance.now();
        content += piece;
        reply.textContent = content;
        reply.scrollIntoView({ block: 'end' });
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
  } catch (e) {
    finish = e.name === 'AbortError' ? 'stopped' : `error: ${e.message}`;
  }
  const seconds = first ? (performance.now() - first) / 1e3 : 0;
  const tokens = usage?.completion_tokens;
  const rate = tokens > 1 && seconds > 0 ? (tokens - 1) / seconds : null;
  reply.classList.remove('streaming');
  const meta = document.createElement('span');
  meta.className = 'meta';
  meta.textContent = [tokens != null ? `${tokens} tokens` : null, rate ? `${rate.toFixed(1)} tok/s` : null, model.info.backend,
    finish && finish !== 'stop' ? finish : null].filter(Boolean).join(' · ');
  reply.append(meta);
  reply.dataset.finish = finish ?? 'stop';
  $('speed').textContent = rate ? `last reply ${rate.toFixed(1)} tok/s on ${model.info.backend}` : '';
  // A stopped reply stays in the conversation as far as it got.
  messages.push({ role: 'assistant', content });
  replying = null;
  setBusy();
  $('input').focus();
}

$('model').onchange = () => ($('custom-row').hidden = $('model').value !== 'custom');
$('load').onclick = load;
$('stop').onclick = () => replying?.abort();
$('clear').onclick = () => {
  replying?.abort();
  messages = [];
  $('log').replaceChildren();
};
$('composer').onsubmit = (e) => {
  e.preventDefault();
  const text = $('input').value;
  $('input').value = '';
  send(text);
};
$('input').onkeydown = (e) => {
  if (e.key === 'Enter' && !e.shiftKey) {
    e.preventDefault();
    $('composer').requestSubmit();
  }
};

await fillModels();
setBusy();
document.body.dataset.ready = 'true';
