// The model runner: load by URL, `hf:` name or file with progress (bytes, speed, time
// left, cache or network, and whether the URL was cached before), then generate with the
// sampler settings, stop, and each token's time. The prompt is text to continue or a chat
// message, as the user picks (never switched by itself); WebGPU on a software adapter
// asks first, with an estimate of how slow it will be.

import { Model } from '../../www/index.js';
import { ms, tokensPerSecond } from '../shared/bench-format.js';
import { bytes, orDash, progressLine } from '../shared/format.js';
import { timeline } from './chart.js';
import { adapterName } from './detect.js';
import { softwareEstimate } from './estimate.js';

/** The weight type most of `bytesByType`'s bytes are in (`{ Q4_K: 756781056, Q6_K: 354009600 }` → 'Q4_K'). */
function mainType(bytesByType) {
  return Object.entries(bytesByType ?? {}).reduce((a, b) => (b[1] > a[1] ? b : a), [null, 0])[0];
}

/** Each prompt mode's example prompt: switching modes swaps one for the other while it is unedited. */
const EXAMPLE_PROMPTS = { complete: 'Once upon a time,', chat: 'Tell me a two-sentence story about a lighthouse.' };

export class Runner {
  #$;
  #onModel;
  #software;
  #measuredRate;
  model = null;
  label = '';
  #loadAbort = null;
  #genAbort = null;
  #cachedCheck = 0; // the latest showCached() call: an older one's answer is dropped
  #estimateCheck = 0; // the same for #showSlowWarning()'s size look-up

  /**
   * `onModel(model | null)` is told when a model is loaded or disposed; `software`: the
   * WebGPU adapter is a software one (null without WebGPU); `measuredRate(type)`: the
   * WebGPU matvec rate this page measured (Bench.webgpuRate), for the slowness estimate.
   */
  constructor($, { onModel, software, measuredRate }) {
    this.#$ = $;
    this.#onModel = onModel;
    this.#software = software;
    this.#measuredRate = measuredRate;
    $('model-load').onclick = () => this.load();
    $('model-abort').onclick = () => this.#loadAbort?.abort();
    $('model-dispose').onclick = () => this.dispose();
    $('gen-run').onclick = () => this.generate();
    $('gen-stop-btn').onclick = () => this.#genAbort?.abort();
    $('model-url').onchange = () => this.#sourceChanged();
    $('model-file').onchange = () => this.#sourceChanged();
    $('model-hub').onchange = () => this.#sourceChanged();
    $('model-backend').onchange = () => this.#showSlowWarning();
    $('gen-max').onchange = () => this.#showSlowWarning();
    $('slow-confirm').onclick = () => this.load({ confirmed: true });
    $('slow-cancel').onclick = () => {
      $('model-backend').value = 'cpu';
      this.#showSlowWarning();
      $('model-backend').focus();
    };
    for (const radio of document.querySelectorAll('input[name="gen-mode"]')) radio.onchange = () => this.#modeChanged();
    this.showCached();
  }

  #sourceChanged() {
    this.showCached();
    this.#showSlowWarning();
  }

  /** 'complete' (the prompt is text to continue) or 'chat' (a user message, through the model's chat template). */
  #mode() {
    return this.#$('gen-chat').checked ? 'chat' : 'complete';
  }

  #modeChanged() {
    const prompt = this.#$('gen-prompt');
    const mode = this.#mode();
    if (Object.values(EXAMPLE_PROMPTS).includes(prompt.value)) prompt.value = EXAMPLE_PROMPTS[mode];
  }

  /** The backend the runner would load on is WebGPU on a software adapter. */
  #slowBackend() {
    return this.#software === true && this.#$('model-backend').value === 'webgpu';
  }

  /**
   * Shows (or hides) the software-adapter warning, with an estimate from the size of the
   * model Load would load: a local file's, else its header's (Model.inspect reads only
   * that, and names the main weight type), else unknown.
   */
  async #showSlowWarning() {
    const $ = this.#$;
    const check = ++this.#estimateCheck;
    $('slow-warning').hidden = !this.#slowBackend();
    if (!this.#slowBackend()) return;
    const maxTokens = Number($('gen-max').value) || 48;
    const show = (modelBytes, type) => {
      if (check === this.#estimateCheck) $('slow-estimate').textContent = softwareEstimate(modelBytes, this.#measuredRate(type), maxTokens).text;
    };
    $('slow-estimate').textContent = 'Estimating from the model’s size…';
    const { source } = this.#source();
    if (typeof source !== 'string') return show(source.size);
    try {
      const header = await Model.inspect(source, { backend: 'webgpu', hubUrl: this.#hubUrl() });
      show(header.dataBytes, mainType(header.bytesByType));
    } catch {
      show(null); // no header to read (a wrong URL): the load will say why
    }
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

  /**
   * Loads the model. WebGPU on a software adapter loads only `confirmed` (from the
   * warning's button): until then the warning is shown and focused instead.
   */
  async load({ confirmed = false } = {}) {
    const $ = this.#$;
    if (this.#slowBackend() && !confirmed) {
      this.#showSlowWarning();
      $('model-status').className = 'summary bad';
      $('model-status').textContent = 'Not loaded: WebGPU here is a software adapter. Confirm or choose the CPU path in the warning above.';
      $('slow-confirm').focus();
      return;
    }
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
        ['Adapter', info.backend === 'webgpu' ? adapterName(info.adapter) : null],
        ['Fallback reason', info.fallbackReason],
      ];
      for (const [k, v] of rows) {
        const tr = tbody.insertRow();
        tr.insertCell().textContent = k;
        tr.insertCell().textContent = orDash(v);
      }
      // The prompt mode stays the user's choice; only a model without a template cannot chat.
      $('gen-chat').disabled = !info.hasChatTemplate;
      if (!info.hasChatTemplate && this.#mode() === 'chat') {
        $('gen-complete').checked = true;
        this.#modeChanged();
      }
      $('gen-chat-note').textContent = info.hasChatTemplate ? '' : `(${label} has no chat template)`;
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
    const text = $('gen-prompt').value;
    const mode = this.#mode();
    // Token ids rather than text, so the status can say how many the model reads.
    const prompt = mode === 'chat'
      ? model.tokenize(model.applyChatTemplate([{ role: 'user', content: text }]), { parseSpecial: true, addSpecial: false })
      : model.tokenize(text);
    const stats = $('gen-stats');
    const head = `${prompt.length} prompt tokens (${mode === 'chat' ? 'a chat message' : 'text to continue'})`;
    stats.className = 'summary';
    stats.dataset.mode = mode;
    stats.dataset.promptTokens = prompt.length;
    delete stats.dataset.done;
    const slow = model.info.backend === 'webgpu' && this.#software;
    // The file type names the main weight type: 'Q4_K_M' is mostly Q4_K.
    const type = model.info.quantization?.replace(/_[SML]$/, '');
    const perToken = slow && softwareEstimate(model.info.dataBytes, this.#measuredRate(type), 1).secondsPerToken;
    stats.textContent = `${head}: prefill…` + (perToken ? ` (a software adapter: about ${ms(1e3 * perToken)} per token, estimated)` : '');
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
        stats.textContent = `${head}; ${times.length} tokens; first after ${ms(times[0])}; ` +
          `decode ${tokensPerSecond(decode)} on ${model.info.backend}`;
      }
    } catch (e) {
      finish = e.name === 'AbortError' ? 'stopped' : `${e.name}: ${e.message}`;
    }
    const sorted = times.slice(1).sort((a, b) => a - b);
    if (sorted.length) {
      stats.textContent += `; per token: min ${ms(sorted[0])}, median ${ms(sorted[sorted.length >> 1])}, ` +
        `max ${ms(sorted[sorted.length - 1])} — ${finish}`;
    } else {
      stats.textContent += ` — ${finish}`;
    }
    stats.className = finish === 'done' || finish === 'stopped' ? 'summary ok' : 'summary bad';
    stats.dataset.done = finish;
    // The first token carries the prefill; the chart shows the decode steps after it.
    timeline($('gen-timeline'), times.slice(1), 'ms', `Milliseconds per decode token, tokens 2…${times.length} (token 1, with the prefill: ${ms(times[0])})`);
    this.#buttons(false, false);
  }
}
