// examples/chat/ as a person uses it (run by pages.test.mjs): at phone width, SmolLM2
// loaded in the worker, a message sent, the reply streamed (the bubble grows over
// several updates) and finished with tok/s; Stop ends a reply and the next one runs.

import { assertNoProblems, docShot, openPage, screenshot, step } from './lib/browser.mjs';
import { MODEL_NAME, check, text } from './lib/checks.mjs';

export async function chatPage(browser, base, webgpu) {
  const mode = webgpu ? 'webgpu' : 'nogpu';
  const page = await openPage(browser, `${base}/examples/chat/`, { viewport: { width: 390, height: 844 } });
  await page.waitForSelector('body[data-ready]', { timeout: 60_000 });
  await step(`chat (phone width): load SmolLM2 in the worker, send a message, get a streamed reply`, async () => {
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 0, `the page is ${overflow}px wider than a phone screen`);
    await page.selectOption('#model', `../../.cache/models/${MODEL_NAME}`);
    await page.click('#load');
    await page.waitForSelector('body[data-backend], #status.bad', { timeout: 120_000 });
    const status = await text(page, '#status');
    console.log(`   ${status}`);
    check(/ready on/.test(status), `load: ${status}`);
    // Count the reply's updates: a streamed reply grows in several steps.
    await page.evaluate(() => {
      window.replyUpdates = 0;
      new MutationObserver(() => window.replyUpdates++).observe(document.getElementById('log'), { subtree: true, characterData: true, childList: true });
    });
    await page.click('#setup details summary'); // the settings are folded away
    await page.fill('#max-tokens', '32');
    await page.fill('#temperature', '0');
    await page.fill('#input', 'What is the capital of France?');
    await page.click('#send');
    await page.waitForSelector('.msg.assistant[data-finish]', { timeout: 120_000 });
    const reply = await text(page, '.msg.assistant');
    const updates = await page.evaluate(() => window.replyUpdates);
    const finish = await page.getAttribute('.msg.assistant', 'data-finish');
    console.log(`   reply (${updates} updates, finish ${finish}): ${reply}`);
    check(updates >= 4, `the reply should stream (saw ${updates} updates)`);
    check(/tok\/s/.test(reply) && (finish === 'stop' || finish === 'length'), `reply: ${reply}`);
    check(/cached/.test(await page.$eval('#model', (s) => s.selectedOptions[0].textContent)), 'the loaded model should be listed as cached');
    await page.click('#setup details summary');
    if (webgpu) await docShot(page, 'chat');
    await page.click('#setup details summary');
  });
  await step('chat: Stop ends a reply part-way, and the next message still gets a reply', async () => {
    await page.fill('#max-tokens', '400');
    await page.fill('#input', 'Write a long story about a dragon who learns to bake bread.');
    await page.click('#send');
    await page.waitForFunction(() => (document.querySelectorAll('.msg.assistant')[1]?.textContent.length ?? 0) > 20, null, { timeout: 60_000 });
    await page.click('#stop');
    const stopped = page.locator('.msg.assistant').nth(1);
    await page.waitForFunction(() => document.querySelectorAll('.msg.assistant[data-finish]').length === 2, null, { timeout: 30_000 });
    const finish = await stopped.getAttribute('data-finish');
    check(finish === 'stopped', `the stopped reply should say so, finish: ${finish}`);
    await page.fill('#max-tokens', '8');
    await page.fill('#input', 'Thanks!');
    await page.click('#send');
    await page.waitForFunction(() => document.querySelectorAll('.msg.assistant[data-finish]').length === 3, null, { timeout: 60_000 });
    console.log(`   stopped at: ${(await stopped.textContent()).slice(0, 60)}…; then: ${await page.locator('.msg.assistant').nth(2).textContent()}`);
  });
  await screenshot(page, `chat-${mode}`);
  assertNoProblems(page, `chat (${mode})`);
  await page.context().close();
}
