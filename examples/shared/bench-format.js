// Speeds and times as people read them, the very small ones included: WebGPU on a
// software adapter decodes at 0.027 tok/s, which a fixed one decimal prints as "0.0".

/** `digits` significant digits, integers from 10^digits: 1234.5 → "1235", 3.456 → "3.5", 0.02734 → "0.027". */
export function sig(v, digits = 2) {
  if (v == null || !Number.isFinite(v)) return '–';
  if (Math.abs(v) >= 10 ** digits) return v.toFixed(0);
  // Number() drops toPrecision's trailing zeros and exponent form ("1.0e-3" → 0.001).
  return String(Number(v.toPrecision(digits)));
}

/** Tokens per second; below one a second also as seconds per token: "0.027 tok/s (37 s/token)". */
export function tokensPerSecond(v) {
  if (v == null || !Number.isFinite(v) || v <= 0) return '– tok/s';
  return v < 1 ? `${sig(v)} tok/s (${sig(1 / v)} s/token)` : `${sig(v, 3)} tok/s`;
}

/** Milliseconds, as seconds from 10 s on: 8.25 → "8.3 ms", 812 → "812 ms", 37012 → "37 s". */
export function ms(v) {
  if (v == null || !Number.isFinite(v)) return '–';
  return v >= 10_000 ? `${sig(v / 1e3)} s` : `${sig(v, 3)} ms`;
}
