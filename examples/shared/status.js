// What the pages with a model field (chat, search) say about it: the status line under the
// field (a line, an optional second line, and the technical detail behind a click), and
// announcements for screen readers. The ids are the pages' own: status, status-line,
// status-note, announce.

const $ = (id) => document.getElementById(id);

/** A folded "Technical details" block holding `text`: the package's own words, for whoever debugs. */
export function technicalDetails(text) {
  const details = document.createElement('details');
  details.className = 'technical';
  const summary = document.createElement('summary');
  summary.textContent = 'Technical details';
  const pre = document.createElement('pre');
  pre.textContent = text;
  details.append(summary, pre);
  return details;
}

/** The status under the model field: a line, an optional second line, and the detail behind a click. */
export function setStatus(line, { note = null, detail = null, bad = false } = {}) {
  $('status-line').textContent = line;
  $('status-line').classList.toggle('bad', bad);
  $('status-note').textContent = note ?? '';
  $('status-note').hidden = !note;
  $('status').querySelector('details')?.remove();
  if (detail) $('status').append(technicalDetails(detail));
}

/**
 * Says `text` to screen readers once. Emptied first so that the same text twice is read
 * twice. (The chat's conversation is not a live region: a streamed reply would be read
 * token by token, so whole replies and load results come through here.)
 */
export function announce(text) {
  $('announce').textContent = '';
  requestAnimationFrame(() => ($('announce').textContent = text));
}
