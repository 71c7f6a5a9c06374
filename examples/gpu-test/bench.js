// Benchmarks: matvec bandwidth per weight type and the cost of one dispatch (wasm
// diagnostics exports, on WebGPU and on the CPU path), and prefill/decode speed of the
// loaded model; each drawn as a bar chart, with progress as each measurement lands.

import { sig, tokensPerSecond } from '../shared/bench-format.js';
import { barChart } from './chart.js';

/** The weight types the test models use. */
const TYPES = ['F16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q4_K', 'Q5_K', 'Q6_K'];

export class Bench {
  #engine;
  #$;
  #webgpu = false;
  /** The latest matvec run: GB/s by type and backend, and the matrix size. */
  #matvec = null;
  /** Model speed results by "model · backend". */
  #modelRuns = new Map();

  constructor(engine, $) {
    this.#engine = engine;
    this.#$ = $;
  }

  init(webgpu) {
    const $ = this.#$;
    this.#webgpu = webgpu;
    $('bench-run').onclick = () => this.runKernels();
    if (!webgpu) {
      $('bench-cpu').checked = true;
      $('bench-cpu').disabled = true;
    }
  }

  /**
   * The WebGPU matvec rate the last benchmark measured here for weight type `type`, else
   * the median over the types it measured: `{ gbPerSecond, type (null for the median),
   * size }`, or null before a WebGPU benchmark.
   */
  webgpuRate(type) {
    const rates = this.#matvec?.webgpu ?? {};
    const size = this.#matvec?.size;
    if (rates[type] > 0) return { gbPerSecond: rates[type], type, size };
    const all = Object.values(rates).filter((v) => v > 0).sort((a, b) => a - b);
    return all.length ? { gbPerSecond: all[all.length >> 1], type: null, size } : null;
  }

  /** Matvec GB/s per type on each backend, then the dispatch cost; `#bench-progress` counts the measurements. */
  async runKernels() {
    const $ = this.#$;
    const size = Number($('bench-size').value);
    const reps = Math.max(1, Number($('bench-reps').value) || 1);
    const backends = [...(this.#webgpu ? ['webgpu'] : []), ...($('bench-cpu').checked ? ['cpu'] : [])];
    const progress = $('bench-progress');
    const steps = (TYPES.length + 1) * backends.length;
    let done = 0;
    const status = (what) => {
      progress.max = steps;
      progress.value = done;
      $('bench-summary').textContent = `${done} of ${steps} measured; now ${what}…`;
    };
    $('bench-run').disabled = true;
    progress.hidden = false;
    $('bench-summary').className = 'summary';
    delete $('bench-chart').dataset.done;
    this.#matvec = { size, ...Object.fromEntries(backends.map((b) => [b, {}])) };
    const groups = TYPES.map((type) => ({ label: type, values: {} }));
    const chart = () => barChart($('bench-chart'), {
      title: `Matvec bandwidth, ${size}×${size}`, groups, series: backends, unit: 'GB/s of weights read',
    });
    try {
      for (const [i, type] of TYPES.entries()) {
        for (const backend of backends) {
          status(`matvec ${type} on ${backend}`);
          const r = await this.#engine.benchMatvec(backend, type, size, size, reps);
          groups[i].values[backend] = this.#matvec[backend][type] = r.gbPerSecond;
          done++;
          chart();
        }
      }
      const lines = [];
      for (const backend of backends) {
        status(`the dispatch cost on ${backend}`);
        const r = await this.#engine.benchDispatch(backend, 200);
        lines.push(`${backend}: ${sig(r.usPerDispatch, 3)} µs per extra dispatch`);
        done++;
      }
      progress.value = done;
      $('bench-dispatch').textContent = `Dispatch overhead (200 small dependent ops, each reading the last one's output, in one batch): ${lines.join('; ')}.`;
      $('bench-summary').textContent = `done: ${TYPES.length} types × ${backends.join(' + ')}`;
      $('bench-summary').className = 'summary ok';
      $('bench-chart').dataset.done = 'true';
    } catch (e) {
      $('bench-summary').textContent = `failed after ${done} of ${steps}: ${e.name}: ${e.message}`;
      $('bench-summary').className = 'summary bad';
    } finally {
      $('bench-run').disabled = false;
    }
  }

  /** Prefill and decode tok/s of `model` (greedy, end-of-sequence ignored), charted per model and backend. */
  async runModel(model, label) {
    const $ = this.#$;
    const promptTokens = Math.max(1, Number($('mbench-prompt').value) || 1);
    const genTokens = Math.max(2, Number($('mbench-gen').value) || 2);
    $('mbench-run').disabled = true;
    // One call does it all: the bar runs without a value (indeterminate) until it ends.
    $('mbench-progress').hidden = false;
    $('mbench-progress').removeAttribute('value');
    $('mbench-summary').className = 'summary';
    $('mbench-summary').textContent = `running: ${promptTokens} prompt tokens, then ${genTokens} generated…`;
    try {
      const seed = await model.tokenize('The quick brown fox jumps over the lazy dog. ', { addSpecial: false });
      const prompt = Array.from({ length: promptTokens }, (_, i) => seed[i % seed.length]);
      const r = await model.complete(prompt, { maxTokens: genTokens, temperature: 0, ignoreEos: true });
      const key = `${label} · ${model.info.backend}`;
      this.#modelRuns.set(key, { prefill: r.timings.prefillTokensPerSecond, decode: r.timings.decodeTokensPerSecond });
      const groups = [...this.#modelRuns].map(([k, v]) => ({ label: k, values: v }));
      barChart($('mbench-chart'), { title: 'Model speed', groups, series: ['prefill', 'decode'], unit: 'tokens/s' });
      $('mbench-summary').textContent =
        `${key}: prefill ${promptTokens} tokens at ${tokensPerSecond(r.timings.prefillTokensPerSecond)}, ` +
        `decode ${r.tokenIds.length} tokens at ${tokensPerSecond(r.timings.decodeTokensPerSecond)}`;
      $('mbench-summary').className = 'summary ok';
      $('mbench-chart').dataset.done = 'true';
    } catch (e) {
      $('mbench-summary').textContent = `failed: ${e.name}: ${e.message}`;
      $('mbench-summary').className = 'summary bad';
    } finally {
      $('mbench-progress').value = $('mbench-progress').max;
      $('mbench-run').disabled = false;
    }
  }
}
