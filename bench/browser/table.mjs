// The driver's printout: one table row per engine × model, then our CPU decode (and
// prefill) over wllama's for each model. Node-only (run.mjs imports it).

const fmt = (x, digits = 1) => {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '-';
  // A software-GPU row runs at hundredths of a token per second: keep two figures.
  return Math.abs(x) < 1 && x !== 0 ? x.toPrecision(2) : x.toFixed(digits);
};
const range = (r) => (r ? `${fmt(r[0])}–${fmt(r[1])}` : '');

/**
 * Markdown table, so a run's output can go into bench/results/ as it is: per row its
 * engine, backend and model, then `measured(row)` (the row's own figures, blank when it
 * did not run), the load average and a note of why it did not run.
 */
function markdown(rows, head, measured) {
  const columns = ['engine', 'backend', 'model', ...head, 'load 1m', 'note'];
  const lines = [columns, columns.map(() => '---')];
  for (const r of rows) {
    const ok = r.status === 'ok';
    lines.push([
      r.engine,
      r.backend,
      r.model,
      ...(ok ? measured(r) : head.map(() => '')),
      r.loadAverage ? fmt(r.loadAverage[0], 2) : '',
      ok ? '' : `${r.status}: ${r.reason}`,
    ]);
  }
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** The text-generation rows: load, prefill and decode. */
export function formatTable(rows) {
  const head = ['load ms', 'prefill tok/s', '(range)', 'decode tok/s', '(range)', 'tokens p/g'];
  return markdown(rows, head, (r) => [
    fmt(r.loadMs, 0),
    fmt(r.prefillTokS),
    range(r.prefillRange),
    fmt(r.decodeTokS),
    range(r.decodeRange),
    `${r.promptTokens}/${r.genTokens}`,
  ]);
}

/** The embeddings rows (id kindling-cpu-embed): inputs/s and tokens/s per batch. */
export function formatEmbedTable(rows) {
  const head = ['batch (inputs×tokens)', 'inputs/s', 'tokens/s', 'ms per request', 'runs (s)', 'load ms'];
  return markdown(rows, head, (r) => [
    `${r.inputs}×${r.input_tokens}`,
    fmt(r.inputs_per_s, 2),
    fmt(r.tokens_per_s),
    fmt(r.seconds * 1e3, 0),
    r.runs_s.map((s) => fmt(s, 2)).join(', '),
    fmt(r.loadMs, 0),
  ]);
}

/** Per model: Kindling CPU ÷ wllama, for decode and prefill (medians). */
export function ratios(rows) {
  const out = [];
  // One thread each, then the threaded pair (same thread count) where it ran.
  const pairs = [['kindling-cpu', 'wllama', 1], ['kindling-cpu-threads', 'wllama-threads', null]];
  for (const model of [...new Set(rows.map((r) => r.model))]) {
    for (const [oursId, theirsId, one] of pairs) {
      const ours = rows.find((r) => r.model === model && r.id === oursId && r.status === 'ok');
      const theirs = rows.find((r) => r.model === model && r.id === theirsId && r.status === 'ok');
      if (!ours || !theirs) continue;
      const threads = one ?? ours.threads;
      out.push({ model, threads, decode: ours.decodeTokS / theirs.decodeTokS, prefill: ours.prefillTokS / theirs.prefillTokS });
    }
  }
  return out;
}

export function formatRatios(list, floor) {
  return list
    .map((r) => {
      const verdict = floor && r.threads === 1 ? ` (floor ${floor}×: ${r.decode >= floor ? 'met' : 'NOT met'})` : '';
      const on = `${r.threads} thread${r.threads === 1 ? '' : 's'} each`;
      return `${r.model}, ${on}: Kindling CPU decode ÷ wllama decode = ${fmt(r.decode, 2)}×${verdict}; prefill ${fmt(r.prefill, 2)}×`;
    })
    .join('\n');
}
