// Small SVG charts (no dependencies), drawn at their container's width so that their
// text stays readable on a phone, and drawn again when that width changes. Each is an
// image to assistive technology (role="img") whose accessible name lists its values.

import { sig } from '../shared/bench-format.js';

const COLORS = ['#2855c5', '#c25e00', '#0a7d32', '#9b2fae'];
const NS = 'http://www.w3.org/2000/svg';
const FONT = 11; // px, as style.css sets for chart text

function el(name, attrs, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

const finite = (v) => typeof v === 'number' && Number.isFinite(v);

/** Each container's latest drawing, run again when its width changes. */
const drawings = new WeakMap();
const resized = new ResizeObserver((entries) => {
  for (const { target } of entries) {
    const d = drawings.get(target);
    // In the next frame: a redraw changes the container's height, which, in this
    // callback, would be a resize loop the browser reports as an error.
    if (d && d.width !== target.clientWidth) requestAnimationFrame(() => d.draw());
  }
});

/** Draws `render(width)`'s nodes (an SVG, or an array) into `container` now and again whenever the container's width changes. */
function draw(container, render) {
  const d = {
    width: 0,
    draw() {
      d.width = container.clientWidth;
      container.replaceChildren(...[render(d.width || 760)].flat());
    },
  };
  drawings.set(container, d);
  resized.observe(container);
  d.draw();
}

/**
 * The value axis: a log axis labelled at each power of ten when the positive values span
 * more than 20× (WebGPU on a software adapter measures 0.003 GB/s beside the CPU's 3; on a
 * linear axis its bars would be invisible), else a linear one from 0 at round steps.
 * `at(v)` is the fraction of the axis' length that `v` reaches.
 */
function axis(values) {
  const positive = values.filter((v) => v > 0);
  const max = Math.max(1e-9, ...positive);
  const min = Math.min(max, ...positive);
  if (max / min > 20) {
    // Start a power of ten below min / 2, so the smallest bar is a visible length.
    const lo = Math.floor(Math.log10(min / 2));
    const hi = Math.ceil(Math.log10(max));
    const ticks = Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));
    return { log: true, ticks, at: (v) => (v > 0 ? Math.max(0, (Math.log10(v) - lo) / (hi - lo)) : 0) };
  }
  // Linear: 1, 2 or 5 × 10^k per step, about four steps to the top.
  const raw = max / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  const top = Math.ceil(max / step) * step;
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  return { log: false, ticks, at: (v) => Math.max(0, v / top) };
}

/**
 * A horizontal grouped bar chart drawn into `container`: `groups` = [{ label, values:
 * { seriesName: number } }], one bar per name of `series` (in legend order), each with
 * its value after it; `title` and `unit` name what is measured. A value that is not a
 * finite number (a failed or unmeasurable run) gets no bar and "–".
 */
export function barChart(container, { title, groups, series, unit }) {
  const values = groups.flatMap((g) => series.map((s) => g.values[s])).filter(finite);
  const scale = axis(values);
  const scaleName = scale.log ? 'log scale' : 'linear scale';
  const described = groups.map((g) => `${g.label}: ${series.map((s) => `${s} ${sig(g.values[s])}`).join(', ')}`);
  const name = `${title} (${unit}, ${scaleName}). ${described.join('; ')}.`;

  draw(container, (width) => {
    const longest = Math.max(...groups.map((g) => g.label.length));
    // Group labels beside their bars when they fit in 30% of the width, else above them.
    const labelsLeft = longest * FONT * 0.62 + 8 <= width * 0.3;
    const left = labelsLeft ? Math.ceil(longest * FONT * 0.62 + 8) : 4;
    const bar = 13;
    const groupHeight = series.length * (bar + 2) + (labelsLeft ? 8 : FONT + 10);
    const top = 24; // the legend
    const length = width - left - 44; // room after the longest bar for its value
    const height = top + groups.length * groupHeight + 30;
    const svg = el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': name });
    // The legend.
    series.forEach((s, i) => {
      svg.append(el('rect', { x: 4 + i * 110, y: 4, width: 10, height: 10, fill: COLORS[i % COLORS.length] }));
      svg.append(el('text', { x: 18 + i * 110, y: 13 }, s));
    });
    // Grid lines and tick labels along the bottom.
    const axisY = top + groups.length * groupHeight;
    for (const t of scale.ticks) {
      const x = left + scale.at(t) * length;
      svg.append(el('line', { x1: x, x2: x, y1: top, y2: axisY + 3, class: 'tick' }));
      svg.append(el('text', { x, y: axisY + 14, 'text-anchor': 'middle' }, sig(t)));
    }
    svg.append(el('text', { x: width - 4, y: axisY + 27, 'text-anchor': 'end' }, `${unit} (${scaleName})`));
    groups.forEach((g, gi) => {
      let y = top + gi * groupHeight + (labelsLeft ? 4 : FONT + 6);
      svg.append(el('text', labelsLeft ? { x: left - 6, y: y + bar - 2, 'text-anchor': 'end' } : { x: left, y: y - 3 }, g.label));
      series.forEach((s, si) => {
        const v = g.values[s];
        // At least 2 px: a measured value is never invisible, whatever the axis.
        const w = finite(v) ? Math.max(2, scale.at(v) * length) : 0;
        if (w) svg.append(el('rect', { x: left, y, width: w, height: bar, fill: COLORS[si % COLORS.length], class: 'bar' }));
        svg.append(el('text', { x: left + w + 4, y: y + bar - 2, class: 'value' }, sig(v)));
        y += bar + 2;
      });
    });
    return svg;
  });
}

/**
 * One thin bar per value (each decode token's milliseconds), scaled to the largest, with
 * `caption` below (as text that wraps); the SVG's accessible name gives min, median and
 * max, and the values themselves when there are at most 64.
 */
export function timeline(container, values, unit, caption) {
  const ok = values.filter(Number.isFinite);
  const max = Math.max(1e-9, ...ok);
  const sorted = [...ok].sort((a, b) => a - b);
  const range = sorted.length ? `min ${sig(sorted[0])}, median ${sig(sorted[sorted.length >> 1])}, max ${sig(max)} ${unit}` : 'no values';
  const name = `${caption}: ${range}${ok.length && ok.length <= 64 ? `; each: ${ok.map((v) => sig(v)).join(', ')}` : ''}.`;
  draw(container, (width) => {
    const height = 120;
    const w = width / Math.max(values.length, 1);
    const svg = el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': name });
    values.forEach((v, i) => {
      if (!Number.isFinite(v)) return;
      const h = Math.max((height - 16) * (v / max), 1);
      svg.append(el('rect', { x: i * w, y: height - h, width: Math.max(w - 1, 0.5), height: h, fill: COLORS[0], class: 'bar' }));
    });
    svg.append(el('text', { x: 2, y: 12 }, `max ${sig(max)} ${unit}`));
    const p = document.createElement('p');
    p.className = 'caption';
    p.textContent = caption;
    return [svg, p];
  });
}
