// The kernel test runner: one row per check of the wasm diagnostics export
// (crates/web/src/diagnostics.rs): each runs one WGSL kernel family on this browser's
// WebGPU and on the CPU backend (the reference) over the same generated inputs.

export class KernelRunner {
  #engine;
  #$;
  #results = new Map();
  #busy = false;
  #adapter = null;

  constructor(engine, $) {
    this.#engine = engine;
    this.#$ = $;
  }

  /** Builds the table (one row per check); `enabled` is false without WebGPU; `adapter` names it. */
  init(enabled, reason, adapter) {
    this.#adapter = adapter;
    const $ = this.#$;
    const tbody = $('kernels-table').tBodies[0];
    tbody.replaceChildren();
    for (const name of this.#engine.kernelChecks()) {
      const tr = tbody.insertRow();
      tr.dataset.name = name;
      tr.dataset.status = 'pending';
      tr.insertCell().textContent = name;
      for (let i = 0; i < 7; i++) tr.insertCell();
      tr.cells[1].textContent = 'not run';
      tr.cells[1].className = 'pending';
      for (const i of [2, 4, 5, 6, 7]) tr.cells[i].className = 'num';
      const button = document.createElement('button');
      button.textContent = 'Run';
      // 56 buttons read "Run": each says which test it runs.
      button.setAttribute('aria-label', `Run the ${name} test`);
      button.disabled = !enabled;
      button.onclick = () => this.run([name]);
      tr.insertCell().append(button);
    }
    $('kernels-run-all').disabled = !enabled;
    $('kernels-run-all').onclick = () => this.run(this.#engine.kernelChecks());
    $('kernels-copy').onclick = () => this.copy();
    if (!enabled) {
      $('kernels-summary').textContent = `Kernel tests need WebGPU: ${reason}`;
      $('kernels-summary').className = 'summary bad';
    }
  }

  /** Runs the named checks one after another, updating their rows as each ends. */
  async run(names) {
    if (this.#busy) return;
    this.#busy = true;
    const $ = this.#$;
    $('kernels-run-all').disabled = true;
    const progress = $('kernels-progress');
    progress.hidden = false;
    progress.max = names.length;
    const start = performance.now();
    try {
      for (const [i, name] of names.entries()) {
        progress.value = i;
        const tr = $('kernels-table').querySelector(`tr[data-name="${CSS.escape(name)}"]`);
        tr.dataset.status = 'running';
        tr.cells[1].textContent = 'running…';
        tr.cells[1].className = 'pending';
        let r;
        try {
          r = await this.#engine.runKernelCheck(name);
        } catch (e) {
          r = { name, pass: false, error: `${e.name}: ${e.message}` };
        }
        this.#results.set(name, r);
        this.#show(tr, r);
        this.#summary(performance.now() - start);
      }
    } finally {
      progress.value = names.length;
      this.#busy = false;
      $('kernels-run-all').disabled = false;
      $('kernels-copy').disabled = this.#results.size === 0;
    }
  }

  #show(tr, r) {
    tr.dataset.status = r.pass ? 'pass' : 'fail';
    tr.cells[1].textContent = r.error ?? (r.pass ? 'pass' : `FAIL (worst at value ${r.worst})`);
    tr.cells[1].className = r.pass ? 'pass' : 'fail';
    tr.cells[2].textContent = r.maxError == null ? '' : r.maxError.toExponential(2);
    tr.cells[3].textContent = r.tolerance ?? '';
    tr.cells[4].textContent = r.values ?? '';
    tr.cells[5].textContent = r.gpuMs == null ? '' : r.gpuMs.toFixed(1);
    tr.cells[6].textContent = r.gpuFirstMs == null ? '' : r.gpuFirstMs.toFixed(1);
    tr.cells[7].textContent = r.cpuMs == null ? '' : r.cpuMs.toFixed(1);
  }

  #summary(ms) {
    const all = [...this.#results.values()];
    const failed = all.filter((r) => !r.pass).length;
    const el = this.#$('kernels-summary');
    el.className = failed ? 'summary bad' : 'summary ok';
    el.textContent = `${all.length - failed} passed, ${failed} failed of ${this.#engine.kernelChecks().length} (${(ms / 1e3).toFixed(1)} s)` +
      (this.#adapter ? ` on ${this.#adapter}` : '');
  }

  /** The results as JSON, to the clipboard (and kept in `json()` for pages that cannot write it). */
  json() {
    return JSON.stringify({ userAgent: navigator.userAgent, results: [...this.#results.values()] }, null, 2);
  }

  async copy() {
    const el = this.#$('kernels-summary');
    try {
      await navigator.clipboard.writeText(this.json());
      el.textContent += ' — JSON copied';
    } catch (e) {
      // Clipboard access needs focus and permission; say so rather than fail.
      el.textContent += ` — could not copy (${e.name}); window.kindlingKernelResults() returns it`;
    }
  }
}
