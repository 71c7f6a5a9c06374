// The driver's printout: one table row per engine × model, then our CPU decode (and
// prefill) over wllama's for each model. Node-only (run.mjs imports it).

const fmt = (x, digits = 1) => {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '-';
  // A software-GPU row runs at hundredths of a token per second: keep two figures.
  return Math.abs(x) < 1 && x !== 0 ? x.toPrecision(2) : x.toFixed(digits);
};
const range = (r) => (r ? `${fmt(r[0])}–${fmt(r[1])}` : '');

/** Markdown table, so a run's output can go into bench/results/ as it is. */
export function formatTable(rows) {
  const head = ['engine', 'backend', 'model', 'load ms', 'prefill tok/s', '(range)', 'decode tok/s', '(range)', 'tokens p/g', 'load 1m', 'note'];
  const lines = [head, head.map(() => '---')];
  for (const r of rows) {
    const ok = r.status === 'ok';
    lines.push([
      r.engine,
      r.backend,
      r.model,
      ok ? fmt(r.loadMs, 0) : '',
      ok ? fmt(r.prefillTokS) : '',
      ok ? range(r.prefillRange) : '',
      ok ? fmt(r.decodeTokS) : '',
      ok ? range(r.decodeRange) : '',
      ok ? `${r.promptTokens}/${r.genTokens}` : '',
      r.loadAverage ? fmt(r.loadAverage[0], 2) : '',
      ok ? '' : `${r.status}: ${r.reason}`,
    ]);
  }
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** The embeddings rows (id kindling-cpu-embed): inputs/s and tokens/s per batch. */
export function formatEmbedTable(rows) {
  const head = ['engine', 'backend', 'model', 'batch (inputs×tokens)', 'inputs/s', 'tokens/s', 'ms per request', 'runs (s)', 'load ms', 'load 1m', 'note'];
  const lines = [head, head.map(() => '---')];
  for (const r of rows) {
    const ok = r.status === 'ok';
    lines.push([
      r.engine,
      r.backend,
      r.model,
      ok ? `${r.inputs}×${r.input_tokens}` : '',
      ok ? fmt(r.inputs_per_s, 2) : '',
      ok ? fmt(r.tokens_per_s) : '',
      ok ? fmt(r.seconds * 1e3, 0) : '',
      ok ? r.runs_s.map((s) => fmt(s, 2)).join(', ') : '',
      ok ? fmt(r.loadMs, 0) : '',
      r.loadAverage ? fmt(r.loadAverage[0], 2) : '',
      ok ? '' : `${r.status}: ${r.reason}`,
    ]);
  }
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** Per model: Kindling CPU ÷ wllama, for decode and prefill (medians). */
export function ratios(rows) {
  const out = [];
  for (const model of [...new Set(rows.map((r) => r.model))]) {
    const ours = rows.find((r) => r.model === model && r.id === 'kindling-cpu' && r.status === 'ok');
    const theirs = rows.find((r) => r.model === model && r.id === 'wllama' && r.status === 'ok');
    if (!ours || !theirs) continue;
    out.push({ model, decode: ours.decodeTokS / theirs.decodeTokS, prefill: ours.prefillTokS / theirs.prefillTokS });
  }
  return out;
}

export function formatRatios(list, floor) {
  return list
    .map((r) => {
      const verdict = floor ? ` (floor ${floor}×: ${r.decode >= floor ? 'met' : 'NOT met'})` : '';
      return `${r.model}: Kindling CPU decode ÷ wllama decode = ${fmt(r.decode, 2)}×${verdict}; prefill ${fmt(r.prefill, 2)}×`;
    })
    .join('\n');
}
