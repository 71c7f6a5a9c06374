// examples/search/ as a person uses it (run by pages.test.mjs): nomic-embed-text-v1.5
// loaded (the CPU path says why in words), a few sample documents picked and one of the
// user's own added, embedded with progress (the bar shown, "k of n" as the API reports
// each input), then queries whose best match is plain — a question about bread dough
// among documents on volcanoes, jazz and black holes ranks the bread paragraph first, a
// question about a football match ranks the user's own document first — each ranking
// sorted, the best clearly above the rest, and every score within 0.005 of llama.cpp's
// cosine for the same texts (tests/fixtures/search_page_refs.json, made by
// tests/scripts/gen_search_refs.py with llama-embedding); the task-prefix hint is on the
// page; axe-core finds nothing serious. With WebGPU off, Stop ends an embedding part-way,
// and `?model=` names a text-generation model (SmolLM2), which the page refuses in plain
// words.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SAMPLES } from '../../examples/search/documents.js';
import { ROOT, assertAccessible, assertNoProblems, docShot, openPage, screenshot, step } from './lib/browser.mjs';
import { MODEL_NAME, check, text } from './lib/checks.mjs';

const LAPTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/**
 * llama.cpp's cosines for what the test embeds: the picked samples (few and short, so the
 * CPU path embeds them in seconds), then the user's own document; and the queries.
 */
const REFS = JSON.parse(readFileSync(path.join(ROOT, 'tests/fixtures/search_page_refs.json'), 'utf8'));
const OWN_TITLE = 'Your document 1';
const PICKED = REFS.documents.filter((d) => d.title !== OWN_TITLE);
const OWN = REFS.documents.find((d) => d.title === OWN_TITLE).text;
/** How far a score may be from llama.cpp's cosine (the same F16 file; measured: at most 2.1e-4, in Chromium on the CPU path). */
const TOLERANCE = 0.005;

/** Loads the model in the field; returns the status line once the load has ended. */
async function load(page) {
  await page.click('#load');
  await page.waitForSelector('body[data-load=ready], body[data-load=failed]', { timeout: 180_000 });
  const status = await text(page, '#status-line');
  console.log(`   ${status} ${await text(page, '#status-note')}`);
  return status;
}

/** Searches for `query`; returns the ranking shown: [{ title, score, shown }] best first. */
async function search(page, query) {
  const before = await page.evaluate(() => Number(document.body.dataset.searches ?? 0));
  await page.fill('#query', query);
  await page.click('#search-button');
  await page.waitForFunction((n) => Number(document.body.dataset.searches ?? 0) > n, before, { timeout: 180_000 });
  return page.$$eval('#results li', (items) => items.map((li) => ({
    title: li.dataset.title, score: Number(li.dataset.score), shown: li.querySelector('.score').textContent,
  })));
}

/**
 * The ranking for `ref` (a query of REFS): every document once, sorted, each score shown
 * to 3 places and within TOLERANCE of llama.cpp's cosine; the best match first and
 * clearly above the second.
 */
function checkRanking(ranked, ref) {
  const q = `“${ref.text}”`;
  const deltas = ranked.map((r) => {
    const i = REFS.documents.findIndex((d) => d.title === r.title);
    check(i >= 0, `${q}: ${r.title} is not one of the documents embedded`);
    return { ...r, ref: ref.cosines[i], delta: Math.abs(r.score - ref.cosines[i]) };
  });
  const worst = deltas.reduce((a, b) => (b.delta > a.delta ? b : a));
  console.log(`   ${q}: ${ranked.map((r) => `${r.title} ${r.shown}`).join(', ')}; max |Δ| from llama.cpp ${worst.delta.toExponential(1)} (${worst.title})`);
  check(new Set(ranked.map((r) => r.title)).size === REFS.documents.length && ranked.length === REFS.documents.length,
    `${q}: ${ranked.length} documents ranked, expected each of the ${REFS.documents.length} once`);
  for (const [i, r] of ranked.entries()) {
    check(r.shown === r.score.toFixed(3), `${q}: ${r.title} shows ${r.shown} for a score of ${r.score}`);
    if (i > 0) check(ranked[i - 1].score >= r.score, `${q}: the ranking is not sorted at ${r.title}`);
  }
  check(worst.delta <= TOLERANCE, `${q}: ${worst.title}'s score ${worst.score} is ${worst.delta.toFixed(4)} from llama.cpp's cosine ${worst.ref}`);
  const [first, second] = ranked;
  check(first.title === ref.best, `${q}: the best match should be ${ref.best}, not ${first.title} (${first.shown})`);
  check(first.score - second.score > 0.1, `${q}: ${ref.best} (${first.shown}) is not clearly above ${second.title} (${second.shown})`);
}

export async function searchPage(browser, base, webgpu) {
  const mode = webgpu ? 'webgpu' : 'nogpu';
  const page = await openPage(browser, `${base}/examples/search/`, { viewport: LAPTOP });
  await page.waitForSelector('body[data-ready]', { timeout: 60_000 });
  await step('search: labelled controls, the task-prefix hint, axe-core before loading', async () => {
    check(await page.getByRole('textbox', { name: 'Embedding model (GGUF URL)' }).inputValue() === '../../.cache/models/nomic-embed-text-v1.5.f16.gguf',
      'the model field should hold nomic-embed-text-v1.5 by default');
    check(await page.getByRole('search').count() === 1 && await page.getByRole('searchbox', { name: 'Query' }).count() === 1, 'the query box should be a searchbox named "Query" in a search landmark');
    check(await page.getByRole('list', { name: 'Documents ranked by similarity to the query' }).count() === 1, 'the results should be a named list');
    const hint = await text(page, '#prefix-hint');
    check(/search_document: /.test(hint) && /search_query: /.test(hint) && await page.isVisible('#prefix-hint'), `the page should say which task prefixes it adds: ${hint}`);
    check(await page.getByRole('checkbox', { name: 'Task prefixes' }).isChecked(), 'the task prefixes should be on by default');
    check(hint.includes(REFS.prefixes.document.trim()) && hint.includes(REFS.prefixes.query.trim()), 'the references were made with the prefixes the page says it adds');
    for (const doc of PICKED) {
      check(SAMPLES.find((d) => d.title === doc.title)?.text === doc.text, `the sample ${doc.title} differs from the one in search_page_refs.json: run tests/scripts/gen_search_refs.py`);
    }
    await assertAccessible(page, 'search (idle)');
  });
  await step('search: load nomic-embed-text-v1.5; pick 4 samples and add a document of your own; embed them with progress', async () => {
    const status = await load(page);
    check(await page.getAttribute('body', 'data-load') === 'ready' && /^nomic-embed-text-v1\.5\.f16\.gguf is ready/.test(status), `the model should load: ${status}`);
    const note = await text(page, '#status-note');
    if (!webgpu) check(/^Running on the CPU: this browser has no WebGPU/.test(note), `without WebGPU the page should say it runs on the CPU and why: ${note}`);
    check(await page.getByRole('checkbox', { name: 'Task prefixes' }).isChecked(), 'the prefixes should stay on for a nomic-bert model');
    await page.click('#samples-none');
    for (const { title } of PICKED) await page.getByRole('checkbox', { name: new RegExp(`^${title} — `) }).check();
    await page.fill('#own', `${OWN}\n\n`);
    // Everything the line under the button said, and whether the progress bar showed.
    await page.evaluate(() => {
      window.embedLines = [];
      window.barShown = false;
      new MutationObserver(() => window.embedLines.push(document.getElementById('embed-status').textContent))
        .observe(document.getElementById('embed-status'), { subtree: true, characterData: true, childList: true });
      new MutationObserver(() => (window.barShown ||= !document.getElementById('embed-progress').hidden))
        .observe(document.getElementById('embed-progress'), { attributes: true });
    });
    const start = Date.now();
    await page.click('#embed');
    await page.waitForSelector('body[data-embedding=done]', { timeout: 180_000 });
    const { embedLines, barShown } = await page.evaluate(() => ({ embedLines: window.embedLines, barShown: window.barShown }));
    const done = await text(page, '#embed-status');
    console.log(`   ${done} (${((Date.now() - start) / 1e3).toFixed(1)} s in the test; lines: ${embedLines.join(' | ')})`);
    const count = REFS.documents.length;
    check(barShown, 'the progress bar should show while the documents are embedded');
    check(embedLines.some((l) => new RegExp(`^Embedding documents: [1-9]\\d* of ${count}…$`).test(l)), `the progress should count the documents done, as the API reports them: ${embedLines.join(' | ')}`);
    check(new RegExp(`^Embedded ${count} documents \\(\\d+ tokens\\) in [\\d.]+ s(, [\\d.]+ tokens/s)? on the (CPU|GPU)\\.$`).test(done), `the embedding should finish with a count, tokens and time: ${done}`);
    check(await page.getAttribute('body', 'data-embedded') === String(count), `${count} vectors should be kept`);
  });
  await step('search: a question about bread dough ranks the bread paragraph first; one about football ranks your own document first', async () => {
    const [dough, football] = REFS.queries;
    checkRanking(await search(page, dough.text), dough);
    check(await page.getAttribute('body', 'data-embedded') === String(REFS.documents.length + 1), 'a search should embed only the query (the documents are kept)');
    await assertAccessible(page, 'search (results)');
    await screenshot(page, `search-${mode}`);
    if (webgpu) await docShot(page.locator('#query-section'), 'search');
    checkRanking(await search(page, football.text), football);
  });
  if (!webgpu) {
    await step('search: Stop ends an embedding part-way; the vectors already made stay, and the controls come back', async () => {
      const before = await page.getAttribute('body', 'data-embedded');
      await page.click('#samples-all');
      await page.click('#embed');
      // The samples are short and share one forward pass, so Stop lands inside it: the
      // request rejects at once (the worker finishes the pass and its vectors are dropped).
      await page.waitForFunction(() => /^Embedding documents: \d+ of/.test(document.getElementById('embed-status').textContent) && !document.getElementById('stop').disabled, null, { timeout: 120_000 });
      await page.click('#stop');
      await page.waitForSelector('body[data-embedding=done]', { timeout: 60_000 });
      const status = await text(page, '#embed-status');
      console.log(`   ${status} (vectors kept: ${await page.getAttribute('body', 'data-embedded')}, before: ${before})`);
      check(status === 'Stopped.', `the page should say the embedding stopped: ${status}`);
      check(await page.getAttribute('body', 'data-embedded') === before, 'a stopped request should add no vectors (it returns none)');
      check(!(await page.isDisabled('#embed')) && !(await page.isDisabled('#search-button')) && await page.isDisabled('#stop'), 'after Stop, Embed and Search should be enabled and Stop disabled');
      await page.click('#samples-none');
      for (const { title } of PICKED) await page.getByRole('checkbox', { name: new RegExp(`^${title} — `) }).check();
    });
  }
  await step('search (phone width): nothing wider than the screen', async () => {
    await page.setViewportSize(PHONE);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 0, `the page is ${overflow}px wider than a phone screen`);
    await screenshot(page, `search-${mode}-phone`);
  });
  assertNoProblems(page, `search (${mode})`);
  await page.context().close();

  // A text-generation model named by ?model=: loaded, then refused in plain words (once, on the CPU path).
  if (!webgpu) {
    await step('search: ?model= names SmolLM2 (a text-generation model); the page refuses it in plain words', async () => {
      const url = `../../.cache/models/${MODEL_NAME}`;
      const other = await openPage(browser, `${base}/examples/search/?model=${encodeURIComponent(url)}`, { viewport: LAPTOP });
      await other.waitForSelector('body[data-ready]', { timeout: 60_000 });
      check(await other.inputValue('#model-url') === url, `?model= should fill the model field: ${await other.inputValue('#model-url')}`);
      const status = await load(other);
      check(await other.getAttribute('body', 'data-load') === 'failed', `a text-generation model should not be taken: ${status}`);
      check(status === `${MODEL_NAME} generates text; this page needs an embedding model, such as nomic-embed-text-v1.5.`, `the refusal should be in plain words: ${status}`);
      check(await other.isDisabled('#embed') && await other.isDisabled('#query'), 'without an embedding model, Embed and the query box should stay disabled');
      await assertAccessible(other, 'search (refused model)');
      assertNoProblems(other, 'search (refused model)');
      await other.context().close();
    });
  }
}
