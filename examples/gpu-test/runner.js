// The model runner: load by URL, `hf:` name or file with progress (bytes, speed, time
// left, cache or network, and whether the URL was cached before), then generate with the
// sampler settings, stop, and each token's time.

import { Model } from '../../www/index.js';
import { bytes, orDash, progressLine } from '../shared/format.js';
import { timeline } from './chart.js';

export class Runner {
  #$;
  #onModel;
  model = null;
  label = '';
  #loadAbort = null;
  #genAbort = null;
  #cachedCheck = 0; // the latest showCached() call: an older one's answer is dropped

  /** `onModel(model | null)` is told when a model is loaded or disposed. */
  constructor($, onModel) {
    this.#$ = $;
    this.#onModel = onModel;
    $('model-load').onclick = () => this.load();
    $('model-abort').onclick = () => this.#loadAbort?.abort();
    $('model-dispose').onclick = () => this.dispose();
    $('gen-run').onclick = () => this.generate();
    $('gen-stop-btn').onclick = () => this.#genAbort?.abort();
    $('model-url').onchange = () => this.showCached();
    $('model-hub').onchange = () => this.showCached();
    this.showCached();
  }

  #source() {
    const file = this.#$('model-file').files[0];
    if (file) return { source: file, label: file.name };
    const text = this.#$('model-url').value.trim();
    const source = text.startsWith('hf:') ? text : new URL(text, location.href).href;
    return { source, label: text.split('/').pop() };
  }

  /** Whether the URL is in the model cache already (a load then reads no model bytes). */
  async showCached() {
    const check = ++this.#cachedCheck;
    const { source } = this.#source();
    let line = 'a local file: read from disk';
    if (typeof source === 'string') {
      try {
        line = (await Model.cache.has(source, { hubUrl: this.#hubUrl() })) ? 'cached: loads from this browser’s storage' : 'not cached: loads from the network';
      } catch (e) {
        line = `cache unavailable (${e.message})`;
      }
    }
    // Editing the hub field, then the URL, starts two checks (each field's change
    // event); the one for the older input must not answer last.
    if (check === this.#cachedCheck) this.#$('model-cached').textContent = line;
  }

  /** The hub `hf:` names resolve against (the package's default when empty). */
  #hubUrl() {
    return this.#$('model-hub').value.trim() || undefined;
  }

  async dispose() {
    const m = this.model;
    this.model = null;
    this.#onModel(null);
    await m?.dispose();
    this.#$('model-status').textContent = 'Disposed.';
    this.#$('model-info').tBodies[0].replaceChildren();
    this.#buttons();
  }

  #buttons(loading = false, generating = false) {
    const $ = this.#$;
    $('model-load').disabled = loading;
    $('model-abort').disabled = !loading;
    $('model-dispose').disabled = loading || !this.model;
    $('gen-run').disabled = !this.model || generating;
    $('gen-stop-btn').disabled = !generating;
  }

  async load() {
    const $ = this.#$;
    if (this.model) await this.dispose();
    const { source, label } = this.#source();
    this.#loadAbort = new AbortController();
    this.#buttons(true);
    $('model-status').className = 'summary';
    $('model-status').textContent = 'starting…';
    const start = performance.now();
    try {
      const context = Number($('model-context').value);
      this.model = await Model.load(source, {
        backend: $('model-backend').value,
        contextLength: context > 0 ? context : undefined,
        hubUrl: this.#hubUrl(),
        signal: this.#loadAbort.signal,
        onProgress: (p) => {
          $('model-progress').max = p.total ?? Math.max(p.loaded, 1);
          $('model-progress').value = p.loaded;
          $('model-status').textContent = progressLine(p);
        },
      });
      this.label = label;
      const info = this.model.info;
      $('model-status').className = 'summary ok';
      $('model-status').textContent = `Loaded ${label} in ${((performance.now() - start) / 1e3).toFixed(1)} s on ${info.backend}` +
        (info.fallbackReason ? ` (CPU because ${info.fallbackReason})` : '');
      const tbody = $('model-info').tBodies[0];
      tbody.replaceChildren();
      const rows = [
        ['Architecture', info.architecture], ['Name', info.name], ['Parameters', info.parameters?.toLocaleString()],
        ['Quantization', info.quantization], ['Weights', bytes(info.dataBytes)], ['Context', `${info.contextLength} of ${info.trainedContextLength}`],
        ['Vocabulary', info.vocabSize?.toLocaleString()], ['Backend', info.backend],
        ['Adapter', info.backend === 'webgpu' && info.adapter ? [info.adapter.vendor, info.adapter.architecture, info.adapter.description].filter(Boolean).join(' / ') : null],
        ['Fallback reason', info.fallbackReason],
      ];
      for (const [k, v] of rows) {
        const tr = tbody.insertRow();
        tr.insertCell().textContent = k;
        tr.insertCell().textContent = orDash(v);
      }
      $('gen-chat').checked = info.hasChatTemplate;
      this.#onModel(this.model);
    } catch (e) {
      $('model-status').className = 'summary bad';
      $('model-status').textContent = `${e.name}: ${e.message}`;
    } finally {
      this.#buttons(false);
      this.showCached();
    }
  }

  #options() {
    const $ = this.#$;
    const num = (id) => ($(id).value === '' ? undefined : Number($(id).value));
    const stop = $('gen-stop').value.split(',').map((s) => s.trim()).filter(Boolean);
    return {
      maxTokens: num('gen-max'), temperature: num('gen-temperature'), topK: num('gen-topk'), topP: num('gen-topp'),
      minP: num('gen-minp'), repetitionPenalty: num('gen-rep'), seed: num('gen-seed'), stop: stop.length ? stop : undefined,
    };
  }

  async generate() {
    const $ = this.#$;
    const model = this.model;
    if (!model) return;
    this.#genAbort = new AbortController();
    this.#buttons(false, true);
    $('gen-out').textContent = '';
    $('gen-stats').className = 'summary';
    $('gen-stats').textContent = 'prefill…';
    const text = $('gen-prompt').value;
    const prompt = $('gen-chat').checked
      ? model.tokenize(model.applyChatTemplate([{ role: 'user', content: text }]), { parseSpecial: true, addSpecial: false })
      : text;
    const times = [];
    const start = performance.now();
    let last = start;
    let finish = 'done';
    try {
      for await (const piece of model.generate(prompt, { ...this.#options(), signal: this.#genAbort.signal })) {
        const now = performance.now();
        if (piece.tokenId !== null) times.push(now - last);
        last = now;
        $('gen-out').textContent += piece.text;
        const decode = times.length > 1 ? (times.length - 1) / ((now - start - times[0]) / 1e3) : null;
        $('gen-stats').textContent = `${times.length} tokens; first after ${times[0].toFixed(0)} ms; ` +
          `decode ${decode ? decode.toFixed(1) : '–'} tok/s on ${model.info.backend}`;
      }
    } catch (e) {
      finish = e.name === 'AbortError' ? 'stopped' : `${e.name}: ${e.message}`;
    }
    const sorted = times.slice(1).sort((a, b) => a - b);
    if (sorted.length) {
      $('gen-stats').textContent += `; per token: min ${sorted[0].toFixed(1)}, median ${sorted[sorted.length >> 1].toFixed(1)}, ` +
        `max ${sorted[sorted.length - 1].toFixed(1)} ms — ${finish}`;
    } else {
      $('gen-stats').textContent += ` — ${finish}`;
    }
    $('gen-stats').className = finish === 'done' || finish === 'stopped' ? 'summary ok' : 'summary bad';
    $('gen-stats').dataset.done = finish;
    // The first token carries the prefill; the chart shows the decode steps after it.
    timeline($('gen-timeline'), times.slice(1), 'ms', `decode tokens 2…${times.length} (token 1, with the prefill: ${times[0]?.toFixed(0) ?? '–'} ms)`);
    this.#buttons(false, false);
  }
}
