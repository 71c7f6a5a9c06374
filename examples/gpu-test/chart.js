// A small grouped bar chart as SVG (no dependencies): one group per label, one bar per
// series, with the value written above each bar.

const COLORS = ['#2855c5', '#e08a1e', '#0a7d32', '#9b2fae'];
const NS = 'http://www.w3.org/2000/svg';

function el(name, attrs, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

/** 123.4 → "123", 4.56 → "4.6", 0.0123 → "0.012": two significant digits below 100. */
function label(v) {
  return v >= 100 ? v.toFixed(0) : v.toPrecision(2);
}

/**
 * Draws into `container`: `groups` = [{ label, values: { seriesName: number } }],
 * `series` = names in legend order, `unit` after each value.
 */
export function barChart(container, { groups, series, unit }) {
  const width = 760;
  const height = 240;
  const pad = { top: 28, bottom: 34, left: 8 };
  // A value that is not a finite number (a failed or unmeasurable run) gets no bar.
  const finite = (v) => typeof v === 'number' && Number.isFinite(v);
  const max = Math.max(1e-9, ...groups.flatMap((g) => series.map((s) => (finite(g.values[s]) ? g.values[s] : 0))));
  const groupWidth = (width - pad.left) / Math.max(1, groups.length);
  const barWidth = Math.min(34, (groupWidth - 10) / series.length);
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img' });
  series.forEach((s, i) => {
    svg.append(el('rect', { x: 10 + i * 110, y: 6, width: 10, height: 10, fill: COLORS[i % COLORS.length] }));
    svg.append(el('text', { x: 24 + i * 110, y: 15 }, s));
  });
  groups.forEach((g, gi) => {
    const x0 = pad.left + gi * groupWidth + (groupWidth - barWidth * series.length) / 2;
    series.forEach((s, si) => {
      const v = g.values[s];
      if (!finite(v)) return;
      const h = ((height - pad.top - pad.bottom) * v) / max;
      const x = x0 + si * barWidth;
      const y = height - pad.bottom - h;
      svg.append(el('rect', { x, y, width: barWidth - 2, height: Math.max(h, 0.5), fill: COLORS[si % COLORS.length] }));
      svg.append(el('text', { x: x + barWidth / 2 - 1, y: y - 3, 'text-anchor': 'middle' }, label(v)));
    });
    svg.append(el('text', { x: x0 + (barWidth * series.length) / 2, y: height - pad.bottom + 14, 'text-anchor': 'middle' }, g.label));
  });
  svg.append(el('text', { x: width - 4, y: height - 4, 'text-anchor': 'end' }, unit));
  container.replaceChildren(svg);
}

/** One thin bar per value (each decode token's milliseconds), scaled to the largest. */
export function timeline(container, values, unit, caption) {
  const width = 760;
  const height = 120;
  const max = Math.max(1e-9, ...values.filter(Number.isFinite));
  const w = width / Math.max(values.length, 1);
  const svg = el('svg', { viewBox: `0 0 ${width} ${height + 16}`, role: 'img' });
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) return;
    const h = (height * v) / max;
    svg.append(el('rect', { x: i * w, y: height - h, width: Math.max(w - 1, 0.5), height: Math.max(h, 0.5), fill: COLORS[0] }));
  });
  svg.append(el('text', { x: 2, y: 12 }, `max ${max.toFixed(1)} ${unit}`));
  svg.append(el('text', { x: 2, y: height + 13 }, caption));
  container.replaceChildren(svg);
}
