// Benchmarks: matvec bandwidth per weight type and the cost of one dispatch (wasm
// diagnostics exports, on WebGPU and on the CPU path), and prefill/decode speed of the
// loaded model; each drawn as a bar chart.

import { barChart } from './chart.js';

/** The weight types the test models use. */
const TYPES = ['F16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q4_K', 'Q5_K', 'Q6_K'];

export class Bench {
  #engine;
  #$;
  #webgpu = false;
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

  /** Matvec GB/s per type on each backend, then the dispatch cost. */
  async runKernels() {
    const $ = this.#$;
    const size = Number($('bench-size').value);
    const reps = Math.max(1, Number($('bench-reps').value) || 1);
    const backends = [...(this.#webgpu ? ['webgpu'] : []), ...($('bench-cpu').checked ? ['cpu'] : [])];
    $('bench-run').disabled = true;
    $('bench-summary').className = 'summary';
    const groups = [];
    try {
      for (const type of TYPES) {
        const group = { label: type, values: {} };
        groups.push(group);
        for (const backend of backends) {
          $('bench-summary').textContent = `matvec ${type} on ${backend}…`;
          const r = await this.#engine.benchMatvec(backend, type, size, size, reps);
          group.values[backend] = r.gbPerSecond;
          barChart($('bench-chart'), { groups, series: backends, unit: `GB/s of weights, ${size}×${size} matvec` });
        }
      }
      const lines = [];
      for (const backend of backends) {
        $('bench-summary').textContent = `dispatch cost on ${backend}…`;
        const r = await this.#engine.benchDispatch(backend, 200);
        lines.push(`${backend}: ${r.usPerDispatch.toFixed(1)} µs per extra dispatch`);
      }
      $('bench-dispatch').textContent = `Dispatch overhead (200 small dependent ops, each reading the last one's output, in one batch): ${lines.join('; ')}.`;
      $('bench-summary').textContent = `done: ${TYPES.length} types × ${backends.join(' + ')}`;
      $('bench-summary').className = 'summary ok';
      $('bench-chart').dataset.done = 'true';
    } catch (e) {
      $('bench-summary').textContent = `failed: ${e.name}: ${e.message}`;
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
    $('mbench-summary').className = 'summary';
    $('mbench-summary').textContent = 'running…';
    try {
      const seed = await model.tokenize('The quick brown fox jumps over the lazy dog. ', { addSpecial: false });
      const prompt = Array.from({ length: promptTokens }, (_, i) => seed[i % seed.length]);
      const r = await model.complete(prompt, { maxTokens: genTokens, temperature: 0, ignoreEos: true });
      const key = `${label} · ${model.info.backend}`;
      this.#modelRuns.set(key, { prefill: r.timings.prefillTokensPerSecond, decode: r.timings.decodeTokensPerSecond });
      const groups = [...this.#modelRuns].map(([k, v]) => ({ label: k, values: v }));
      barChart($('mbench-chart'), { groups, series: ['prefill', 'decode'], unit: 'tokens/s' });
      $('mbench-summary').textContent =
        `${key}: prefill ${promptTokens} tokens at ${r.timings.prefillTokensPerSecond.toFixed(1)} tok/s, ` +
        `decode ${r.tokenIds.length} tokens at ${r.timings.decodeTokensPerSecond.toFixed(1)} tok/s`;
      $('mbench-summary').className = 'summary ok';
      $('mbench-chart').dataset.done = 'true';
    } catch (e) {
      $('mbench-summary').textContent = `failed: ${e.name}: ${e.message}`;
      $('mbench-summary').className = 'summary bad';
    } finally {
      $('mbench-run').disabled = false;
    }
  }
}
