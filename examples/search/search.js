// The semantic-search demo: load an embedding model (an encoder, nomic-embed-text-v1.5 by
// default; `?model=URL` picks another), embed a few documents with
// `model.embeddings.create({ input })`, embed a query the same way and rank the documents
// by cosine similarity. Public package API only. The model runs in a Web Worker
// (WorkerModel, as on the chat page): on the CPU path an input is computed without a
// break, which on the page's own thread would freeze it until each was done.

import { WorkerModel as Model } from '../../www/worker-model.js';
import { explainBackend, explainError } from '../shared/explain.js';
import { loadSourceLine, progressLine } from '../shared/format.js';
import { announce, setStatus, technicalDetails } from '../shared/status.js';
import { SAMPLES, parseDocuments } from './documents.js';
import { rank } from './rank.js';

/** The model the tests fetch (tests/scripts/fetch_models.sh puts it under .cache/models). */
const DEFAULT_MODEL = '../../.cache/models/nomic-embed-text-v1.5.f16.gguf';

/** nomic-embed-text's task prefixes: it was trained with the task written before each text. */
const DOCUMENT_PREFIX = 'search_document: ';
const QUERY_PREFIX = 'search_query: ';

const $ = (id) => document.getElementById(id);
let model = null; // the loaded encoder: kept until another one has loaded
let modelName = '';
let loading = false;
let busy = null; // the AbortController of the embedding under way: one at a time
let vectors = new Map(); // embedded text (prefix included) → its vector, for the loaded model
let searches = 0; // queries answered (or failed): body[data-searches], for whoever waits on the page

const absolute = (url) => (url.startsWith('hf:') ? url : new URL(url, location.href).href);

/** The file name of a URL, for the status lines. */
function fileName(url) {
  const file = url.split(/[?#]/)[0].split('/').filter(Boolean).pop() ?? url;
  try {
    return decodeURIComponent(file);
  } catch {
    return file;
  }
}

/** The line under the Embed button, with an optional detail behind a click. */
function setEmbedStatus(line, { detail = null, bad = false } = {}) {
  $('embed-status').textContent = line;
  $('embed-status').classList.toggle('bad', bad);
  $('documents').querySelector('details.technical')?.remove();
  if (detail) $('embed-status').after(technicalDetails(detail));
}

/** Enables what can be used now: embedding and search need a model, and one embedding runs at a time. */
function updateControls() {
  const working = busy !== null;
  for (const id of ['load', 'model-url', 'backend']) $(id).disabled = loading || working;
  $('embed').disabled = !model || working;
  $('query').disabled = !model;
  $('search-button').disabled = !model || working;
  $('stop').disabled = !working;
  $('query').placeholder = model ? 'What are you looking for?' : loading ? 'Loading the model…' : 'Load the model first';
}

/** Says whether the model in the field is in this browser's cache, before anything is loaded. */
async function showCached() {
  if (model || loading) return;
  const url = $('model-url').value.trim();
  if (!url) return;
  const cached = await Model.cache.has(absolute(url)).catch(() => false);
  if (!model && !loading) setStatus(`${fileName(url)} is ${cached ? 'in this browser’s cache' : 'not downloaded yet (it is kept for next time)'}: load it to start.`);
}

/**
 * Loads the model in the field. The model already loaded stays in use until the new one
 * is ready (a bad URL or a text-generation model loses nothing), and is disposed only then.
 */
async function load() {
  const url = $('model-url').value.trim();
  if (!url) return setStatus('Enter a model URL first.', { bad: true });
  const name = fileName(url);
  const previous = model;
  loading = true;
  document.body.dataset.load = 'loading';
  updateControls();
  const cached = await Model.cache.has(absolute(url)).catch(() => false);
  const keeping = previous ? ` ${modelName} stays in use until it is ready.` : '';
  setStatus(`${name}: ${cached ? 'in this browser’s cache, loading from storage' : 'downloading (kept for next time)'}…${keeping}`);
  $('load-progress').hidden = false;
  const start = performance.now();
  let download = null; // the last download event: where the bytes came from
  let next = null;
  try {
    next = await Model.load(absolute(url), {
      backend: $('backend').value,
      onProgress: (p) => {
        if (p.phase === 'download') download = p;
        $('load-progress').max = p.total ?? Math.max(p.loaded, 1);
        $('load-progress').value = p.loaded;
        setStatus(`${name}: ${progressLine(p)}`);
      },
    });
    if (next.info.kind !== 'encoder') {
      const line = `${name} generates text; this page needs an embedding model, such as nomic-embed-text-v1.5.${previous ? ` Still using ${modelName}.` : ''}`;
      setStatus(line, { detail: `model.info.kind is '${next.info.kind}' (architecture ${next.info.architecture}); embeddings need 'encoder'`, bad: true });
      announce(line);
      next.dispose().catch(() => {});
      document.body.dataset.load = 'failed';
      return;
    }
    [model, modelName] = [next, name];
    vectors = new Map(); // another model's vectors do not compare with this one's
    previous?.dispose().catch(() => {});
    // The prefixes are nomic's convention: on for nomic-bert, off for another encoder (the box can change it).
    $('prefixes').checked = model.info.architecture === 'nomic-bert';
    const seconds = ((performance.now() - start) / 1e3).toFixed(1);
    const backend = explainBackend(model.info);
    setStatus(`${name} is ready: ${loadSourceLine(download) ?? 'loaded'} in ${seconds} s.`, { note: backend.text, detail: backend.detail });
    announce(`${name} is ready. ${backend.text}`);
    document.body.dataset.backend = model.info.backend;
    document.body.dataset.load = 'ready';
    setEmbedStatus(`${chosenDocuments().length} documents to embed.`);
  } catch (e) {
    const { text, detail } = explainError(e);
    const line = `Could not load ${name}. ${text}${previous ? ` Still using ${modelName}.` : ''}`;
    setStatus(line, { detail, bad: true });
    announce(line);
    document.body.dataset.load = 'failed';
  } finally {
    loading = false;
    $('load-progress').hidden = true;
    updateControls();
  }
}

/** The sample list: a checkbox per document, all ticked. */
function fillSamples() {
  $('sample-list').replaceChildren(...SAMPLES.map((doc, i) => {
    const li = document.createElement('li');
    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.checked = true;
    box.value = String(i);
    box.onchange = documentsChanged;
    const title = document.createElement('strong');
    title.textContent = doc.title;
    label.append(box, ' ', title, ` — ${doc.text}`);
    li.append(label);
    return li;
  }));
}

/** The documents to search: the ticked samples, then the user's own paragraphs. */
function chosenDocuments() {
  const picked = [...$('sample-list').querySelectorAll('input:checked')].map((box) => SAMPLES[Number(box.value)]);
  const own = parseDocuments($('own').value).map((text, i) => ({ title: `Your document ${i + 1}`, text }));
  return [...picked, ...own];
}

/** What the model is given for a document or a query: the text, after its task prefix when the box is ticked. */
const documentInput = (text) => ($('prefixes').checked ? DOCUMENT_PREFIX : '') + text;
const queryInput = (text) => ($('prefixes').checked ? QUERY_PREFIX : '') + text;

/** The ranking on screen no longer matches the documents: say so (the next search ranks them again). */
function documentsChanged() {
  if (model) setEmbedStatus(`${chosenDocuments().length} documents chosen.`);
  if ($('results').children.length) $('results-summary').textContent = 'The documents changed: search again to rank them.';
}

/**
 * Embeds those of `inputs` that have no vector yet, in one request, showing
 * `label(done, total)` over the progress bar. Returns `{ count, tokens, seconds }` of
 * what was embedded (count 0: nothing was missing).
 */
async function embedMissing(inputs, label, signal) {
  const missing = [...new Set(inputs.filter((input) => !vectors.has(input)))];
  if (!missing.length) return { count: 0, tokens: 0, seconds: 0 };
  const progress = $('embed-progress');
  progress.hidden = false;
  progress.max = missing.length;
  progress.value = 0;
  setEmbedStatus(label(0, missing.length));
  const start = performance.now();
  try {
    const result = await model.embeddings.create({ input: missing }, {
      signal,
      onProgress: ({ done, total }) => {
        progress.max = total;
        progress.value = done;
        setEmbedStatus(label(done, total));
      },
    });
    for (const { embedding, index } of result.data) vectors.set(missing[index], embedding);
    return { count: missing.length, tokens: result.usage?.prompt_tokens ?? 0, seconds: (performance.now() - start) / 1e3 };
  } finally {
    progress.hidden = true;
  }
}

/** "12 documents (310 tokens) in 2.4 s, 130 tokens/s on the GPU". */
function embeddedLine(what, { count, tokens, seconds }) {
  const perSecond = seconds > 0 && tokens ? tokens / seconds : null;
  const rate = perSecond ? `, ${perSecond < 10 ? perSecond.toFixed(1) : Math.round(perSecond)} tokens/s` : '';
  const where = model.info.backend === 'webgpu' ? 'the GPU' : 'the CPU';
  return `${what} (${tokens} tokens) in ${seconds.toFixed(1)} s${rate} on ${where}`;
}

/** Runs `work(signal)` as the one embedding under way (Stop aborts it); failures are said under the Embed button. */
async function exclusive(work) {
  if (!model || busy) return false;
  busy = new AbortController();
  document.body.dataset.embedding = 'running';
  updateControls();
  try {
    await work(busy.signal);
    return true;
  } catch (e) {
    const { text, detail } = explainError(e);
    const line = e?.name === 'AbortError' ? 'Stopped.' : `Embedding failed. ${text}`;
    setEmbedStatus(line, { detail: e?.name === 'AbortError' ? null : detail, bad: e?.name !== 'AbortError' });
    announce(line);
    return false;
  } finally {
    busy = null;
    document.body.dataset.embedding = 'done';
    document.body.dataset.embedded = String(vectors.size);
    updateControls();
  }
}

/** Embeds the chosen documents that have no vector yet. */
function embedDocuments() {
  return exclusive(async (signal) => {
    const docs = chosenDocuments();
    if (!docs.length) return setEmbedStatus('Tick a sample document or add your own first.', { bad: true });
    const done = await embedMissing(docs.map((d) => documentInput(d.text)), (n, total) => `Embedding documents: ${n} of ${total}…`, signal);
    const line = done.count ? `Embedded ${embeddedLine(`${done.count} document${done.count === 1 ? '' : 's'}`, done)}.` : `All ${docs.length} documents are embedded already.`;
    setEmbedStatus(line);
    announce(line);
  });
}

/** Embeds any chosen document not embedded yet, then the query, and shows the documents ranked by cosine similarity. */
async function search(query) {
  const docs = chosenDocuments();
  if (!docs.length) {
    setEmbedStatus('Tick a sample document or add your own first.', { bad: true });
    return;
  }
  let shown = null;
  await exclusive(async (signal) => {
    const docInputs = docs.map((d) => documentInput(d.text));
    const embedded = await embedMissing(docInputs, (n, total) => `Embedding documents first: ${n} of ${total}…`, signal);
    if (embedded.count) setEmbedStatus(`Embedded ${embeddedLine(`${embedded.count} document${embedded.count === 1 ? '' : 's'}`, embedded)}.`);
    const start = performance.now();
    const q = queryInput(query);
    await embedMissing([q], () => 'Embedding the query…', signal);
    if (!embedded.count) setEmbedStatus(`${docs.length} documents embedded.`);
    const ranked = rank(vectors.get(q), docs.map((d, i) => ({ ...d, vector: vectors.get(docInputs[i]) })));
    showResults(query, ranked, (performance.now() - start) / 1e3);
    shown = ranked;
  });
  document.body.dataset.searches = String(++searches);
  if (shown) announce(`Best match: ${shown[0].title}, score ${shown[0].score.toFixed(3)}.`);
}

/** The ranked list: score (cosine similarity, with a bar), title and text of each document. */
function showResults(query, ranked, seconds) {
  $('results-summary').textContent = `${ranked.length} documents ranked for “${query}” (the query embedded and compared in ${seconds.toFixed(2)} s). The score is the cosine similarity of the two vectors: 1 is the same direction.`;
  $('results').replaceChildren(...ranked.map((doc, i) => {
    const li = document.createElement('li');
    li.className = i === 0 ? 'result best' : 'result';
    li.dataset.score = String(doc.score);
    li.dataset.title = doc.title;
    const score = document.createElement('span');
    score.className = 'score';
    score.textContent = doc.score.toFixed(3);
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.setAttribute('aria-hidden', 'true');
    bar.style.setProperty('--score', String(Math.max(0, Math.min(1, doc.score))));
    const title = document.createElement('strong');
    title.textContent = doc.title;
    const text = document.createElement('p');
    text.textContent = doc.text;
    const head = document.createElement('div');
    head.className = 'head';
    head.append(score, bar, title);
    li.append(head, text);
    return li;
  }));
}

$('model-url').value = new URLSearchParams(location.search).get('model') ?? DEFAULT_MODEL;
$('model-url').onchange = showCached;
$('load').onclick = load;
$('embed').onclick = embedDocuments;
$('stop').onclick = () => busy?.abort();
$('samples-all').onclick = () => {
  for (const box of $('sample-list').querySelectorAll('input')) box.checked = true;
  documentsChanged();
};
$('samples-none').onclick = () => {
  for (const box of $('sample-list').querySelectorAll('input')) box.checked = false;
  documentsChanged();
};
$('own').oninput = documentsChanged;
$('prefixes').onchange = documentsChanged;
$('search').onsubmit = (e) => {
  e.preventDefault();
  const query = $('query').value.trim();
  if ($('search-button').disabled || !query) return;
  search(query);
};

fillSamples();
updateControls();
await showCached();
document.body.dataset.ready = 'true';
