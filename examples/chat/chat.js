// The chat demo: pick a model, load it into a Web Worker (WorkerModel) with download
// progress, and chat with streamed replies through the OpenAI-shaped
// `chat.completions.create({ stream: true })`. Public package API only. Replies come as
// text, as JSON under a schema (`response_format`), or with a calculator tool the model
// may call (`tools`; the page runs the call and sends the result back).

import { WorkerModel } from '../../www/worker-model.js';
import { bytes, loadSourceLine, progressLine } from '../shared/format.js';
import { CALCULATOR, evaluate, formatNumber } from './calculator.js';
import { explainBackend, explainError } from '../shared/explain.js';
import { announce, setStatus, technicalDetails } from '../shared/status.js';

/**
 * The models the tests use (tests/scripts/fetch_models.sh puts them under .cache/models),
 * by the names people know them by. Short, so that a name, the size and "cached" fit a
 * phone-wide model list.
 */
const MODELS = [
  { label: 'SmolLM2 135M', url: '../../.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf', size: 98362432 },
  { label: 'Gemma 3 270M', url: '../../.cache/models/gemma-3-270m-q4_k_m.gguf', size: 253113024 },
  { label: 'Qwen2.5 Coder 0.5B', url: '../../.cache/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf', size: 491400064 },
  { label: 'Qwen2.5 Coder 1.5B', url: '../../.cache/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf', size: 1117320768 },
];

/** JSON mode's schema until the user edits it: small, so that a reply fits in a few dozen tokens. */
const DEFAULT_SCHEMA = {
  type: 'object',
  properties: {
    answer: { type: 'string', maxLength: 120 },
    confidence: { enum: ['low', 'medium', 'high'] },
  },
  required: ['answer', 'confidence'],
  additionalProperties: false,
};

/**
 * Added to the system prompt of the request that follows a tool's result. Without it
 * Qwen2.5-Coder-0.5B (greedy) answers a calculator result by echoing the call as bare
 * JSON; with it, "The result of 12*(3+4) is 84."
 */
const AFTER_TOOLS = 'Once a tool has given its result, answer the user’s question in one sentence.';

const $ = (id) => document.getElementById(id);
let model = null; // the loaded WorkerModel: kept until another one has loaded
let modelName = '';
let loading = false;
let messages = []; // the conversation so far; Clear starts a new array
let replying = null; // the AbortController of the reply being streamed: one at a time
let turns = 0; // messages answered (or failed): body[data-turns], for whoever waits on the page

const absolute = (url) => (url.startsWith('hf:') ? url : new URL(url, location.href).href);

function selectedUrl() {
  const value = $('model').value;
  return value === 'custom' ? $('custom-url').value.trim() : value;
}

/** The name a person knows a model by: its label in MODELS, else its file name (metadata names read "Smollm2 135M 8k Lc100K Mix1 Ep2"). */
function friendlyName(url) {
  const known = MODELS.find((m) => absolute(m.url) === absolute(url));
  if (known) return known.label;
  const file = url.split(/[?#]/)[0].split('/').filter(Boolean).pop() ?? url;
  try {
    return decodeURIComponent(file);
  } catch {
    return file;
  }
}

/** The URL box shows when the list's last entry, "Another model (URL)…", is picked. */
const showCustomUrl = () => ($('custom-url').hidden = $('model').value !== 'custom');

/** Fills the model list, each entry saying whether it is cached in this browser. */
async function fillModels() {
  const keep = $('model').value;
  const options = await Promise.all(MODELS.map(async (m) => {
    const cached = await WorkerModel.cache.has(absolute(m.url)).catch(() => false);
    return new Option(`${m.label} · ${bytes(m.size)}${cached ? ' · cached' : ''}`, m.url);
  }));
  $('model').replaceChildren(...options, new Option('Another model (URL)…', 'custom'));
  if (keep) $('model').value = keep;
  showCustomUrl();
}

/** Enables what can be used now: Send (and Enter) only with a model, no load and no reply under way. */
function updateControls() {
  const streaming = replying !== null;
  for (const id of ['load', 'model', 'custom-url', 'backend']) $(id).disabled = loading || streaming;
  $('input').disabled = !model;
  $('send').disabled = !model || loading || streaming;
  $('stop').disabled = !streaming;
  $('input').placeholder = model ? 'Message (Enter sends)' : loading ? 'Loading the model…' : 'Load a model first';
}

/**
 * Loads the selected model in a new worker. The model already loaded stays in use until
 * the new one is ready (a bad URL or a failed download loses nothing), and is disposed
 * only then.
 */
async function load() {
  const url = selectedUrl();
  if (!url) return setStatus('Enter a model URL first.', { bad: true });
  const name = friendlyName(url);
  const previous = model;
  loading = true;
  document.body.dataset.load = 'loading';
  updateControls();
  const cached = await WorkerModel.cache.has(absolute(url)).catch(() => false);
  const keeping = previous ? ` ${modelName} stays in use until it is ready.` : '';
  setStatus(`${name}: ${cached ? 'in this browser’s cache, loading from storage' : 'downloading (kept for next time)'}…${keeping}`);
  $('progress').hidden = false;
  const start = performance.now();
  let download = null; // the last download event: where the bytes came from
  try {
    const next = await WorkerModel.load(absolute(url), {
      backend: $('backend').value,
      onProgress: (p) => {
        if (p.phase === 'download') download = p;
        $('progress').max = p.total ?? Math.max(p.loaded, 1);
        $('progress').value = p.loaded;
        setStatus(`${name}: ${progressLine(p)}`);
      },
    });
    [model, modelName] = [next, name];
    previous?.dispose().catch(() => {}); // its worker ends; nothing to tell the user
    const seconds = ((performance.now() - start) / 1e3).toFixed(1);
    const backend = explainBackend(model.info);
    setStatus(`${name} is ready: ${loadSourceLine(download) ?? 'loaded'} in ${seconds} s.`, { note: backend.text, detail: backend.detail });
    announce(`${name} is ready. ${backend.text}`);
    document.body.dataset.backend = model.info.backend;
    document.body.dataset.load = 'ready';
  } catch (e) {
    const { text, detail } = explainError(e);
    const line = `Could not load ${name}. ${text}${previous ? ` Still using ${modelName}.` : ''}`;
    setStatus(line, { detail, bad: true });
    announce(line);
    document.body.dataset.load = 'failed';
  } finally {
    loading = false;
    $('progress').hidden = true;
    updateControls();
    fillModels();
  }
}

// Following a reply: while it grows, the page stays scrolled to its end, where the
// newest text sits just above the message box (which sticks to the bottom of the window
// and would otherwise cover it); from each Send until the user scrolls up to read, and
// again once they scroll back down to the end.
const page = document.scrollingElement;
let following = true;
let leftAt = 0; // where our last scroll to the end left the page

/** Whether the page is scrolled to its end (within about a line). */
const atEnd = () => page.scrollTop + page.clientHeight >= page.scrollHeight - 40;

function scrollToEnd() {
  window.scrollTo({ top: page.scrollHeight, behavior: 'instant' });
  leftAt = page.scrollTop;
}

/**
 * After the reply grew: to the end, unless the user has scrolled up since our last
 * scroll. Checked here, not only in a scroll listener, because a scroll event comes a
 * frame later and a token arriving in between would scroll the page back down.
 */
function follow() {
  if (following && !atEnd() && page.scrollTop < leftAt - 1) following = false;
  if (following) scrollToEnd();
}

addEventListener('scroll', () => atEnd() && (following = true), { passive: true });
// A window resized or a phone turned while following: keep the end in view.
addEventListener('resize', () => following && scrollToEnd());

function bubble(role, text) {
  const div = document.createElement('div');
  div.className = `msg ${role}`;
  div.textContent = text;
  $('log').append(div);
  return div;
}

/** The reply mode picked under "Reply as": 'text', 'json' or 'calculator'. */
const replyMode = () => document.querySelector('input[name=mode]:checked').value;

/** Shows what belongs to the picked mode: the schema box, or the calculator's explanation. */
function showMode() {
  $('json-box').hidden = replyMode() !== 'json';
  $('calculator-help').hidden = replyMode() !== 'calculator';
}

/** The message under the schema box (none: hidden). */
function schemaError(text) {
  $('schema-error').textContent = text ?? '';
  $('schema-error').hidden = !text;
}

/** The schema in the box, parsed; null, with the reason shown under the box, when it is not a JSON object. */
function readSchema() {
  let schema;
  try {
    schema = JSON.parse($('schema').value);
  } catch (e) {
    schemaError(`The schema is not valid JSON: ${e.message}. Fix it, or switch JSON mode off.`);
    return null;
  }
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
    schemaError('The schema must be a JSON object, such as { "type": "object", "properties": { … } }.');
    return null;
  }
  schemaError(null);
  return schema;
}

/** Whether a message asks for arithmetic: a digit and an operator. */
const looksLikeArithmetic = (text) => /\d/.test(text) && /[-+*/×÷]/.test(text);

/**
 * Streams one request's reply into `reply` (a bubble): its content as it comes, and the
 * tool calls from `delta.tool_calls`, joined by index (OpenAI may split a call's
 * arguments over several chunks; the package sends each whole).
 * Returns `{ content, calls, finish, usage, first, error }`.
 */
async function streamReply(current, request, reply, signal) {
  let content = '';
  const calls = [];
  let first = null;
  let usage = null;
  let finish = null;
  let error = null;
  try {
    const stream = await current.chat.completions.create({ ...request, stream: true, signal });
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta ?? {};
      if (delta.content) {
        first ??= performance.now();
        content += delta.content;
        reply.textContent = content;
        follow();
      }
      // A call comes whole at its end: no tok/s for it (timed from its first content only).
      for (const part of delta.tool_calls ?? []) {
        const call = (calls[part.index ?? calls.length] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (part.id) call.id = part.id;
        if (part.function?.name) call.function.name += part.function.name;
        if (part.function?.arguments) call.function.arguments += part.function.arguments;
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
  } catch (e) {
    finish = e.name === 'AbortError' ? 'stopped' : 'error';
    if (finish === 'error') error = e;
  }
  return { content, calls: calls.filter(Boolean), finish, usage, first, error };
}

/** A new assistant bubble, marked as streaming (and busy for screen readers). */
function replyBubble() {
  const reply = bubble('assistant', '');
  reply.classList.add('streaming');
  reply.setAttribute('aria-busy', 'true');
  follow();
  return reply;
}

/** Ends a streamed bubble: the failure if any, then tokens, tok/s, backend and an unusual finish. Returns what to announce. */
function endReply(reply, result, backend, failureText) {
  const { usage, first, finish } = result;
  const seconds = first ? (performance.now() - first) / 1e3 : 0;
  const tokens = usage?.completion_tokens;
  const rate = tokens > 1 && seconds > 0 ? (tokens - 1) / seconds : null;
  reply.classList.remove('streaming');
  reply.removeAttribute('aria-busy');
  let said = null;
  if (result.error) {
    const failure = explainError(result.error);
    said = `The reply failed. ${failureText ?? failure.text}`;
    const note = document.createElement('p');
    note.className = 'bad';
    note.textContent = said;
    reply.append(note, technicalDetails(failure.detail));
  }
  const meta = document.createElement('span');
  meta.className = 'meta';
  meta.textContent = [tokens != null ? `${tokens} tokens` : null, rate ? `${rate.toFixed(1)} tok/s` : null, backend,
    finish && finish !== 'stop' ? finish.replace('_', ' ') : null].filter(Boolean).join(' · ');
  reply.append(meta);
  reply.dataset.finish = finish ?? 'stop';
  follow();
  return said;
}

/** A JSON-mode reply shown formatted: its text replaced by the indented JSON, or a note when it does not parse. */
function showJson(reply, content, finish) {
  let value;
  try {
    value = JSON.parse(content);
  } catch {
    const note = document.createElement('p');
    note.className = 'bad';
    note.textContent = finish === 'length'
      ? 'The reply was cut off at Max reply tokens before its JSON was complete: raise it in Settings.'
      : 'The reply is not complete JSON.';
    reply.append(note);
    return;
  }
  const pre = document.createElement('pre');
  pre.className = 'json';
  pre.textContent = JSON.stringify(value, null, 2);
  reply.replaceChildren(pre);
  reply.dataset.json = 'valid';
}

/** A calculate call's expression (its arguments are JSON text); null when they hold none. */
function callExpression(call) {
  try {
    const { expression } = JSON.parse(call.function.arguments);
    return typeof expression === 'string' ? expression : null;
  } catch {
    return null;
  }
}

/** Runs one call of the calculator, shown as a tool bubble: `{ expression, result }` or `{ expression, error }`. */
function runCall(call) {
  const expression = callExpression(call);
  let outcome;
  try {
    if (call.function.name !== CALCULATOR.function.name) throw new Error(`there is no tool named “${call.function.name}”`);
    if (expression === null) throw new Error(`the call gives no expression: ${call.function.arguments}`);
    outcome = { expression, result: formatNumber(evaluate(expression)) };
  } catch (e) {
    outcome = { expression, error: e.message };
  }
  const shown = bubble('tool', '');
  const head = document.createElement('span');
  head.className = 'meta';
  head.textContent = 'Calculator (run by this page)';
  const value = document.createElement('span');
  value.className = 'result';
  value.textContent = outcome.error ? `${expression ?? '?'}: ${outcome.error}` : `${expression} = ${outcome.result}`;
  shown.append(head, value);
  if (!outcome.error) shown.dataset.result = outcome.result;
  return outcome;
}

async function send(text) {
  if (!model || loading || replying || !text.trim()) return false;
  const mode = replyMode();
  const schema = mode === 'json' ? readSchema() : null;
  if (mode === 'json' && !schema) return false; // the reason is under the schema box; the text stays in the message box
  const conversation = messages; // a Clear during the reply starts a new one; this reply stays in the old
  const current = model;
  bubble('user', text);
  conversation.push({ role: 'user', content: text });
  const system = $('system').value.trim();
  const request = (hint = '') => ({
    messages: system || hint ? [{ role: 'system', content: [system, hint].filter(Boolean).join(' ') }, ...conversation] : [...conversation],
    max_tokens: Number($('max-tokens').value) || 128,
    temperature: Number($('temperature').value),
  });
  following = true; // the user just sent: show the reply coming, wherever they had scrolled
  scrollToEnd();
  replying = new AbortController();
  document.body.dataset.turn = 'replying';
  updateControls();
  const signal = replying.signal;
  const first = { ...request() };
  if (mode === 'json') first.response_format = { type: 'json_schema', json_schema: { name: 'reply', schema } };
  if (mode === 'calculator') {
    first.tools = [CALCULATOR];
    first.tool_choice = looksLikeArithmetic(text) ? 'required' : 'auto';
  }
  let reply = replyBubble();
  let result = await streamReply(current, first, reply, signal);
  let failureText = null;
  if (mode === 'json' && result.error?.name === 'InvalidRequestError') {
    schemaError(`The package cannot use this schema: ${result.error.message}`);
    failureText = 'The schema cannot be used: the message under the schema box says why.';
  }
  if (mode === 'json' && !result.error && result.finish !== 'stopped') showJson(reply, result.content, result.finish);
  let said = endReply(reply, result, current.info.backend, failureText);
  const spoken = [];
  if (result.calls.length && result.finish === 'tool_calls') {
    // The call goes back with its result: the assistant message carrying tool_calls, then
    // one tool message per call; the model answers from them, without calling again.
    reply.classList.add('call');
    reply.prepend(...result.calls.map((call) => {
      const line = document.createElement('span');
      line.className = 'call-line';
      line.textContent = `Calls ${call.function.name}: ${callExpression(call) ?? call.function.arguments}`;
      return line;
    }));
    conversation.push({ role: 'assistant', content: result.content || null, tool_calls: result.calls });
    for (const call of result.calls) {
      const outcome = runCall(call);
      spoken.push(outcome.error ? `The calculator could not work out ${outcome.expression}: ${outcome.error}.` : `The calculator says ${outcome.expression} = ${outcome.result}.`);
      conversation.push({ role: 'tool', tool_call_id: call.id, content: outcome.error ? `error: ${outcome.error}` : outcome.result });
    }
    reply = replyBubble();
    result = await streamReply(current, { ...request(AFTER_TOOLS), tools: [CALCULATOR], tool_choice: 'none' }, reply, signal);
    said = endReply(reply, result, current.info.backend);
  }
  if (reply.isConnected) announce([...spoken, said ?? `${result.content}${result.finish === 'stopped' ? ' (stopped)' : ''}`].join(' '));
  // A stopped reply stays in the conversation as far as it got.
  conversation.push({ role: 'assistant', content: result.content });
  replying = null;
  document.body.dataset.turn = 'done';
  document.body.dataset.turns = String(++turns);
  updateControls();
  // Back to the message box for the next message, unless the user has gone elsewhere (the settings, say).
  const focus = document.activeElement;
  if (!focus || focus === document.body || $('composer').contains(focus)) $('input').focus();
  return true;
}

$('model').onchange = showCustomUrl;
$('load').onclick = load;
$('stop').onclick = () => replying?.abort();
$('clear').onclick = () => {
  replying?.abort();
  messages = [];
  $('log').replaceChildren();
};
$('composer').onsubmit = (e) => {
  e.preventDefault();
  if ($('send').disabled) return; // requestSubmit() and a form's implicit submit do not check it
  const text = $('input').value;
  if (!text.trim()) return;
  if (replyMode() === 'json' && !readSchema()) return; // the reason shows under the schema box; the message stays
  $('input').value = '';
  send(text);
};
$('input').onkeydown = (e) => {
  // Enter does what Send does, when Send could: never a second reply while one streams
  // (the text stays in the box for later). Shift+Enter is a new line; an input method's
  // Enter confirms its composition.
  if (e.key !== 'Enter' || e.shiftKey || e.isComposing) return;
  e.preventDefault();
  if (!$('send').disabled) $('composer').requestSubmit();
};

for (const radio of document.querySelectorAll('input[name=mode]')) radio.onchange = showMode;
$('schema').value = JSON.stringify(DEFAULT_SCHEMA, null, 2);
showMode();
await fillModels();
updateControls();
document.body.dataset.ready = 'true';
