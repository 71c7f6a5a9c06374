// Number formatting shared by the example pages.

/** 98362432 → "93.8 MiB". */
export function bytes(n) {
  if (n == null || !Number.isFinite(n)) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** Seconds → "1 min 05 s" / "12 s". */
export function duration(s) {
  if (s == null || !Number.isFinite(s)) return '?';
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  return `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, '0')} s`;
}

/** A load progress event as one line: phase, bytes, speed, time left, where from. */
export function progressLine(p) {
  if (p.phase === 'prepare') return 'preparing the model…';
  const of = p.total ? ` of ${bytes(p.total)} (${((100 * p.loaded) / p.total).toFixed(0)}%)` : '';
  let line = `${p.phase === 'download' ? 'downloading' : 'uploading weights'}: ${bytes(p.loaded)}${of}`;
  if (p.bytesPerSecond) line += `, ${bytes(p.bytesPerSecond)}/s`;
  if (p.etaSeconds != null) line += `, ${duration(p.etaSeconds)} left`;
  if (p.source) line += ` — from the ${p.source === 'cache' ? 'cache' : p.source === 'local' ? 'file' : 'network'}`;
  return line;
}

/** A value that may be absent, for tables. */
export function orDash(v) {
  return v == null || v === '' ? '—' : String(v);
}

/**
 * Where a finished load's bytes came from, from its last download progress event
 * (`source`, `cachedBytes`, `networkBytes`): "from this browser's cache", "downloaded
 * (93.8 MiB)", "from the cache (12.0 MiB) and the network (81.8 MiB)" after a resumed
 * download, "from a file"; null when the load reported no download.
 */
export function loadSourceLine(p) {
  if (!p) return null;
  if (p.source === 'local') return 'from a file';
  const cached = p.cachedBytes ?? 0;
  const network = p.networkBytes ?? 0;
  if (cached > 0 && network > 0) return `from the cache (${bytes(cached)}) and the network (${bytes(network)})`;
  if (cached > 0 || p.source === 'cache') return 'from this browser’s cache';
  return `downloaded (${bytes(network || p.loaded)})`;
}
