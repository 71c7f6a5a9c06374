// examples/chat/ as a person uses it (run by pages.test.mjs): at phone width, SmolLM2
// loaded in the worker, a message sent, the reply streamed (the bubble grows over
// several updates) and finished with tok/s, announced to screen readers once as a whole;
// one reply at a time (Enter while one streams sends nothing); Stop ends a reply and the
// next one runs; the end of a long reply stays in view above the message box at phone
// and laptop sizes; a failed load says so in plain words and keeps the loaded model; a
// second load of a model says it came from the cache; axe-core finds nothing serious.
// Then the reply modes: JSON mode (SmolLM2) gives a reply that parses and has the
// schema's required fields, shown formatted, and a schema that is not JSON or that the
// package refuses (an unsupported keyword) is explained in the page; the calculator tool
// (Qwen2.5-Coder-0.5B, greedy) is called for "What is 12*(3+4)?", the page shows 84 as
// its result and the model's final answer (WebGPU off only: a second model's load).

import { assertAccessible, assertNoProblems, docShot, openPage, screenshot, step } from './lib/browser.mjs';
import { MODEL_NAME, check, text } from './lib/checks.mjs';

const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 900 };
const SMOLLM2 = `../../.cache/models/${MODEL_NAME}`;
const QWEN05 = '../../.cache/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf';

/** Picks `value` in the model list (and `url` for the custom entry), loads it, waits; returns the status line. */
async function load(page, value, url) {
  await page.selectOption('#model', value);
  if (url) await page.fill('#custom-url', url);
  await page.click('#load');
  await page.waitForSelector('body[data-load=ready], body[data-load=failed]', { timeout: 120_000 });
  const status = await text(page, '#status-line');
  console.log(`   ${status} ${await text(page, '#status-note')}`);
  return status;
}

/** Sends `message` with `maxTokens` and waits until the conversation has `replies` finished replies. */
async function ask(page, message, maxTokens, replies) {
  await page.fill('#max-tokens', String(maxTokens));
  await page.fill('#input', message);
  await page.click('#send');
  await page.waitForFunction((n) => document.querySelectorAll('.msg.assistant[data-finish]').length === n, replies, { timeout: 120_000 });
}

/** Sends `message` with `maxTokens` and waits until the page has answered it (body[data-turns] counts the turns). */
async function turn(page, message, maxTokens) {
  const before = await page.evaluate(() => Number(document.body.dataset.turns ?? 0));
  await page.fill('#max-tokens', String(maxTokens));
  await page.fill('#input', message);
  await page.click('#send');
  await page.waitForFunction((n) => Number(document.body.dataset.turns ?? 0) > n, before, { timeout: 180_000 });
}

/** JSON mode on SmolLM2: a formatted reply that parses and has the required fields; a bad and a refused schema explained in the page. */
async function jsonMode(page, mode) {
  await page.click('#clear');
  await page.getByRole('radio', { name: 'JSON mode' }).check();
  const box = page.getByRole('textbox', { name: 'JSON schema of the reply' });
  check(await box.isVisible(), 'JSON mode should show a schema box labelled "JSON schema of the reply"');
  const schema = JSON.parse(await box.inputValue());
  check(Array.isArray(schema.required) && schema.required.length > 0, `the schema box should hold a schema with required fields: ${JSON.stringify(schema)}`);
  await assertAccessible(page, 'chat (JSON mode)');
  await turn(page, 'What is the capital of France?', 64);
  const reply = page.locator('.msg.assistant').last();
  const shown = await reply.locator('pre.json').textContent().catch(() => null);
  console.log(`   JSON reply (${await reply.getAttribute('data-finish')}): ${JSON.stringify(shown ?? await reply.textContent())}`);
  check(await reply.getAttribute('data-json') === 'valid' && shown, `the reply should be shown as formatted JSON: ${await reply.textContent()}`);
  const value = JSON.parse(shown);
  check(shown === JSON.stringify(value, null, 2), `the JSON should be shown indented: ${shown}`);
  for (const key of schema.required) check(key in value, `the reply lacks the required field ${key}: ${shown}`);
  check(typeof value.answer === 'string' && schema.properties.confidence.enum.includes(value.confidence), `the reply does not fit the schema: ${shown}`);
  await screenshot(page, `chat-${mode}-json`);

  // Not JSON: nothing is sent, the message stays, the box says why.
  const bubbles = await page.locator('.msg').count();
  await box.fill('{ "type": "object", ');
  await page.fill('#input', 'Hello');
  await page.click('#send');
  await page.waitForSelector('#schema-error:not([hidden])');
  const notJson = await text(page, '#schema-error');
  console.log(`   schema not JSON: ${notJson}`);
  check(/not valid JSON/.test(notJson), `a schema that is not JSON should be explained: ${notJson}`);
  check(await page.locator('.msg').count() === bubbles && await page.inputValue('#input') === 'Hello', 'with a bad schema, nothing should be sent and the message should stay');

  // Refused by the package (a keyword it cannot enforce): said under the box and in the reply, no console error.
  await box.fill(JSON.stringify({ type: 'object', properties: { a: { type: 'string' } }, not: { required: ['a'] } }));
  await turn(page, 'Hello', 16);
  const refused = await text(page, '#schema-error');
  const failed = page.locator('.msg.assistant').last();
  console.log(`   schema refused: ${refused}`);
  check(/^The package cannot use this schema: .+/.test(refused), `a refused schema should be explained under the box: ${refused}`);
  check(await failed.getAttribute('data-finish') === 'error' && /The schema cannot be used/.test(await failed.textContent()),
    `the reply should say the schema cannot be used: ${await failed.textContent()}`);
  check(/InvalidRequestError/.test(await failed.locator('details.technical').textContent()), 'the technical detail should name InvalidRequestError');
  await assertAccessible(page, 'chat (JSON mode, schema refused)');
  await page.click('#clear');
  await page.getByRole('radio', { name: 'Text' }).check();
  check(await box.isHidden(), 'the schema box should hide when JSON mode is off');
}

/** The calculator on Qwen2.5-Coder-0.5B: a calculate call, 84 shown as its result, then the model's answer. */
async function calculator(page, mode) {
  await page.click('#clear');
  await page.getByRole('radio', { name: 'Calculator tool' }).check();
  check(await page.isVisible('#calculator-help'), 'the calculator should explain itself');
  await load(page, QWEN05);
  await assertAccessible(page, 'chat (calculator)');
  await turn(page, 'What is 12*(3+4)?', 48);
  const call = page.locator('.msg.assistant.call');
  check(await call.count() === 1, `the model should call the calculator once (bubbles: ${await page.locator('#log').textContent()})`);
  const callLine = await call.locator('.call-line').textContent();
  const tool = page.locator('.msg.tool');
  const result = await tool.getAttribute('data-result');
  const answer = page.locator('.msg.assistant').last();
  const final = (await answer.evaluate((b) => b.firstChild?.textContent ?? '')).trim();
  console.log(`   ${callLine} → ${await tool.locator('.result').textContent()}; answer (${await answer.getAttribute('data-finish')}): ${final}`);
  check(/^Calls calculate: /.test(callLine), `the call should be shown: ${callLine}`);
  check(result === '84', `the page should show 84 as the tool's result: ${await tool.textContent()}`);
  check(await page.locator('.msg.assistant').count() === 2 && !(await answer.getAttribute('class')).includes('call'), 'a final answer should follow the result');
  check(['stop', 'length'].includes(await answer.getAttribute('data-finish')) && final.length > 0, `the final answer: ${final}`);
  check(/84/.test(final), `the final answer should give the result, 84: ${final}`);
  await screenshot(page, `chat-${mode}-calculator`);
}

/**
 * Installs window.replyEnd(): where the last line of the newest assistant bubble is
 * (a Range over its last non-empty text node) against the viewport and the message
 * box's top; and window.sampleEnds(): checks it on every animation frame while a reply
 * streams, keeping the count and the first failure in window.ends.
 */
function installEndChecks(page) {
  return page.evaluate(() => {
    window.replyEnd = () => {
      const bubbles = document.querySelectorAll('.msg.assistant');
      const last = bubbles[bubbles.length - 1];
      const walker = document.createTreeWalker(last, NodeFilter.SHOW_TEXT);
      let node = null;
      while (walker.nextNode()) if (walker.currentNode.textContent.trim()) node = walker.currentNode;
      if (!node) return null;
      const range = document.createRange();
      range.selectNodeContents(node);
      const rects = range.getClientRects();
      const line = rects[rects.length - 1];
      const box = document.getElementById('composer').getBoundingClientRect().top;
      return { top: Math.round(line.top), bottom: Math.round(line.bottom), box: Math.round(box), ok: line.top >= 0 && line.bottom <= box + 0.5 };
    };
    window.sampleEnds = () => {
      window.ends = { frames: 0, failure: null };
      const sample = () => {
        if (!document.querySelector('.msg.assistant.streaming')) return;
        const end = window.replyEnd();
        if (end) {
          window.ends.frames++;
          if (!end.ok && !window.ends.failure) window.ends.failure = end;
        }
        requestAnimationFrame(sample);
      };
      requestAnimationFrame(sample);
    };
  });
}

/** At `viewport`: a long reply whose last line must stay visible above the message box while it streams and after. */
async function replyEndInView(page, viewport, replies) {
  await page.setViewportSize(viewport);
  await page.fill('#max-tokens', '160');
  await page.fill('#input', 'Write a long story about a dragon who learns to bake bread.');
  await page.click('#send');
  await page.waitForSelector('.msg.assistant.streaming');
  await page.evaluate(() => window.sampleEnds());
  await page.waitForFunction((n) => document.querySelectorAll('.msg.assistant[data-finish]').length === n, replies, { timeout: 120_000 });
  const during = await page.evaluate(() => window.ends);
  const after = await page.evaluate(() => window.replyEnd());
  const scrolls = await page.evaluate(() => document.scrollingElement.scrollHeight > innerHeight);
  const size = `${viewport.width}x${viewport.height}`;
  console.log(`   ${size}: ${during.frames} frames while streaming, end in view in all: ${!during.failure}; after: last line ${after.top}-${after.bottom} px, box top ${after.box} px`);
  check(scrolls, `${size}: the conversation should be longer than the window for this check to mean anything`);
  check(during.frames >= 10, `${size}: too few frames sampled while the reply streamed (${during.frames})`);
  check(!during.failure, `${size}: while streaming, the reply's last line (${JSON.stringify(during.failure)}) was out of view or behind the message box`);
  check(after.ok, `${size}: after the reply, its last line (${JSON.stringify(after)}) is out of view or behind the message box`);
}

export async function chatPage(browser, base, webgpu) {
  const mode = webgpu ? 'webgpu' : 'nogpu';
  const page = await openPage(browser, `${base}/examples/chat/`, { viewport: PHONE });
  await page.waitForSelector('body[data-ready]', { timeout: 60_000 });
  await step('chat (phone width): labelled controls, a named conversation log, axe-core before loading', async () => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 0, `the page is ${overflow}px wider than a phone screen`);
    check(await page.getByRole('log', { name: 'Conversation' }).count() === 1, 'the conversation should be role="log" named "Conversation"');
    check(await page.getByRole('textbox', { name: 'Message' }).count() === 1, 'the message box should be labelled "Message"');
    check(await page.getByRole('combobox', { name: 'Model' }).count() === 1, 'the model list should be labelled "Model"');
    const progress = await page.$eval('#progress', (p) => p.getAttribute('aria-label') || p.labels.length > 0);
    check(progress, 'the progress bar should have a label');
    await assertAccessible(page, 'chat (idle)');
  });
  await step('chat (phone width): load SmolLM2 in the worker, send a message, get a streamed reply announced once', async () => {
    const status = await load(page, SMOLLM2);
    check(/is ready: downloaded/.test(status), `the first load should say it downloaded the model: ${status}`);
    check(/^SmolLM2 135M/.test(status), `the status should name the model as the list does: ${status}`);
    // Count the reply's updates (a streamed reply grows in several steps), the ones made
    // while the bubble sat in a live region not marked busy (a screen reader would read
    // them token by token), and what reaches the live region (#announce).
    await page.evaluate(() => {
      const live = (el) => {
        for (let n = el; n; n = n.parentElement) {
          if (n.getAttribute('aria-busy') === 'true') return false;
          const politeness = n.getAttribute('aria-live');
          if (politeness) return politeness !== 'off';
          if (['log', 'status', 'alert', 'marquee', 'timer'].includes(n.getAttribute('role'))) return true;
        }
        return false;
      };
      window.replyUpdates = 0;
      window.liveUpdates = 0;
      window.announced = [];
      new MutationObserver(() => {
        window.replyUpdates++;
        const streaming = document.querySelector('.msg.assistant.streaming');
        if (streaming && live(streaming)) window.liveUpdates++;
      }).observe(document.getElementById('log'), { subtree: true, characterData: true, childList: true });
      const announce = document.getElementById('announce');
      new MutationObserver(() => announce.textContent && window.announced.push(announce.textContent))
        .observe(announce, { subtree: true, characterData: true, childList: true });
    });
    await page.click('#settings summary'); // the settings are folded away
    await page.fill('#temperature', '0');
    await ask(page, 'What is the capital of France?', 32, 1);
    const reply = await text(page, '.msg.assistant');
    const content = await page.$eval('.msg.assistant', (b) => b.firstChild.textContent);
    const { updates, liveUpdates, announced } = await page.evaluate(() => ({ updates: window.replyUpdates, liveUpdates: window.liveUpdates, announced: window.announced }));
    const finish = await page.getAttribute('.msg.assistant', 'data-finish');
    console.log(`   reply (${updates} updates, finish ${finish}): ${reply}`);
    check(updates >= 4, `the reply should stream (saw ${updates} updates)`);
    check(/tok\/s/.test(reply) && (finish === 'stop' || finish === 'length'), `reply: ${reply}`);
    check(liveUpdates === 0, `${liveUpdates} streamed updates were made inside a live region that is not aria-busy (read out token by token)`);
    await page.waitForFunction(() => window.announced.length > 0);
    const replies = (await page.evaluate(() => window.announced)).filter((a) => a.includes(content.trim()));
    check(replies.length === 1, `the finished reply should reach the live region once, as a whole (announced: ${JSON.stringify(announced)})`);
    check(/cached/.test(await page.$eval('#model', (s) => s.selectedOptions[0].textContent)), 'the loaded model should be listed as cached');
    // The closed list shows the whole entry, "cached" included (its text against the
    // select's width less padding and about 24 px of arrow).
    const cut = await page.$eval('#model', (s) => {
      const context = document.createElement('canvas').getContext('2d');
      context.font = getComputedStyle(s).font;
      const room = s.clientWidth - parseFloat(getComputedStyle(s).paddingLeft) - parseFloat(getComputedStyle(s).paddingRight) - 24;
      const width = context.measureText(s.selectedOptions[0].textContent).width;
      return width > room ? `${s.selectedOptions[0].textContent}: ${Math.round(width)} px of text in ${Math.round(room)} px` : null;
    });
    check(!cut, `the model list cuts its entry off at phone width (${cut})`);
    await assertAccessible(page, 'chat (after a reply)');
    await page.click('#settings summary');
    if (webgpu) await docShot(page, 'chat');
    await page.click('#settings summary'); // open again: the next steps set max tokens
    check(await page.$eval('#settings', (d) => d.open), 'the settings should be open');
    await assertAccessible(page, 'chat (settings open)');
  });
  await step('chat: one reply at a time (Enter while a reply streams sends nothing); Stop ends a reply part-way; the next message gets a reply', async () => {
    await page.fill('#max-tokens', '400');
    await page.fill('#input', 'Write a long story about a dragon who learns to bake bread.');
    await page.click('#send');
    await page.waitForFunction(() => (document.querySelectorAll('.msg.assistant')[1]?.textContent.length ?? 0) > 20, null, { timeout: 60_000 });
    await page.fill('#input', 'And another one about a cat.');
    await page.press('#input', 'Enter');
    await page.waitForTimeout(500);
    const bubbles = await page.locator('.msg.assistant').count();
    check(bubbles === 2, `Enter while a reply streams should send nothing (assistant bubbles: ${bubbles})`);
    check(await page.isDisabled('#send'), 'Send should be disabled while a reply streams');
    check(await page.inputValue('#input') === 'And another one about a cat.', 'the text Enter did not send should stay in the box');
    // Scrolled up to read, the page stays put while the reply grows.
    await page.evaluate(() => window.scrollTo(0, 0));
    const length = await page.locator('.msg.assistant').nth(1).evaluate((b) => b.textContent.length);
    await page.waitForFunction((n) => document.querySelectorAll('.msg.assistant')[1].textContent.length > n + 40, length, { timeout: 30_000 });
    const { y, scrolls } = await page.evaluate(() => ({ y: window.scrollY, scrolls: document.scrollingElement.scrollHeight > innerHeight }));
    check(scrolls, 'the page should be longer than the window for the scrolled-up check to mean anything');
    check(y === 0, `scrolled up while a reply streams, the page should stay put (it scrolled to ${y} px)`);
    await page.click('#stop');
    const stopped = page.locator('.msg.assistant').nth(1);
    await page.waitForFunction(() => document.querySelectorAll('.msg.assistant[data-finish]').length === 2, null, { timeout: 30_000 });
    const finish = await stopped.getAttribute('data-finish');
    check(finish === 'stopped', `the stopped reply should say so, finish: ${finish}`);
    check(await page.locator('.msg.assistant').count() === 2, 'after Stop, no reply to the Enter pressed while streaming should start');
    await ask(page, 'Thanks!', 8, 3);
    console.log(`   stopped at: ${(await stopped.textContent()).slice(0, 60)}…; then: ${await page.locator('.msg.assistant').nth(2).textContent()}`);
  });
  await step('chat: the end of a long reply stays in view above the message box, at 390x844 and 1280x900', async () => {
    await installEndChecks(page);
    await replyEndInView(page, PHONE, 4);
    await replyEndInView(page, LAPTOP, 5);
    await screenshot(page, `chat-${mode}-laptop`);
    await page.setViewportSize(PHONE);
  });
  await step('chat: a failed load (not a GGUF file) says so in plain words and keeps SmolLM2 in use', async () => {
    const status = await load(page, 'custom', `${base}/README.md`);
    check(await page.getAttribute('body', 'data-load') === 'failed', `loading README.md should fail: ${status}`);
    check(/^Could not load README\.md\. This file is not a GGUF model/.test(status), `the failure should be in plain words: ${status}`);
    check(/Still using SmolLM2 135M/.test(status), `the status should say the loaded model stays: ${status}`);
    const plain = await text(page, '#status-line') + await text(page, '#status-note');
    check(!/\w+Error:|bad magic|0x[0-9a-f]+/.test(plain), `the status should not show internal names: ${plain}`);
    const detail = await page.locator('#status details.technical');
    check(await detail.count() === 1 && !(await detail.getAttribute('open')), 'the technical detail should be one click away, in a closed <details>');
    check(/InvalidModelError/.test(await detail.textContent()), `the technical detail should name the error: ${await detail.textContent()}`);
    await ask(page, 'Hello!', 8, 6);
    const reply = page.locator('.msg.assistant').nth(5);
    const finish = await reply.getAttribute('data-finish');
    check(finish === 'stop' || finish === 'length', `the old model should still answer after the failed load: ${finish} ${await reply.textContent()}`);
    console.log(`   then: ${await reply.textContent()}`);
  });
  await step('chat: loading SmolLM2 again says it came from the cache', async () => {
    const status = await load(page, SMOLLM2);
    check(/is ready: from this browser’s cache/.test(status), `the second load should say it came from the cache: ${status}`);
  });
  await screenshot(page, `chat-${mode}`);
  await step('chat: JSON mode (SmolLM2): the reply parses, has the required fields and shows formatted; a bad schema and a refused one are explained in the page', () => jsonMode(page, mode));
  // The calculator loads a second, larger model: once, on the CPU path (WebGPU off), where
  // the page's tool loop is the same and a 0.5B model replies fastest.
  if (!webgpu) await step('chat: the calculator tool (Qwen2.5-Coder-0.5B): "What is 12*(3+4)?" calls calculate, the page shows 84, the model answers', () => calculator(page, mode));
  assertNoProblems(page, `chat (${mode})`);
  await page.context().close();
}
