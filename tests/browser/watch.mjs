// Drives the page's 关注与导出 controls (web/watch.js) in headless Chromium and prints what it saw as one JSON
// object: the answer's export buttons (the downloaded files are saved for the Python side to open), the 关注
// buttons on quotes, on the question and on the document view, an address that opens a document, and the
// 关注与提醒 tab with its alerts.
//
//   node tests/browser/watch.mjs <page-url> <screenshot-dir> <download-dir>
//
// tests/browser/test_watch_page.py starts the server, runs this once and asserts on the JSON.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [url, outDir, downloads] = process.argv.slice(2);
if (!url || !outDir || !downloads) {
  console.error('usage: node watch.mjs <page-url> <screenshot-dir> <download-dir>');
  process.exit(2);
}
await mkdir(outDir, { recursive: true });
await mkdir(downloads, { recursive: true });

const QUESTION = '供电企业因为计划检修要停电，至少要提前几天通知用户？';
const out = { steps: {}, errors: {}, screenshots: [], console: [], page_errors: [] };
const browser = await chromium.launch({
  executablePath: process.env.REGRAG_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--lang=zh-CN',
  ],
});
const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, locale: 'zh-CN', acceptDownloads: true });
context.setDefaultTimeout(10_000);
const page = await context.newPage();
page.on('console', (msg) => {
  if (msg.type() === 'error') out.console.push(`${msg.type()}: ${msg.text()}`);
});
page.on('pageerror', (err) => out.page_errors.push(String(err)));
const posted = [];
let lastAnswer = null;
page.on('request', (req) => {
  if (req.method() === 'POST' && new URL(req.url()).pathname.endsWith('/watches')) posted.push(req.postDataJSON());
});
page.on('response', async (res) => {
  if (res.request().method() === 'POST' && new URL(res.url()).pathname.endsWith('/query')) {
    try {
      lastAnswer = await res.json();
    } catch {
      lastAnswer = null;
    }
  }
});

async function shot(name) {
  const file = path.join(outDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  out.screenshots.push(file);
}

async function step(name, fn) {
  try {
    out.steps[name] = await fn();
  } catch (err) {
    out.errors[name] = String(err && err.stack ? err.stack : err);
    try {
      await shot(`failed-${name}`);
    } catch {
      // the page may be gone
    }
  }
}

/** The page at a shared address naming the question: it asks on load (app.js); wait for the answer's tools. */
async function answered() {
  lastAnswer = null;
  await page.goto(`${url}?q=${encodeURIComponent(QUESTION)}`);
  await page.locator('#answer .answer-tools').waitFor();
  await page.waitForFunction(() => document.querySelectorAll('#answer li.bullet .watch-button').length > 0);
}

/** Click an export button and keep the file the browser saves. */
async function save(button, name) {
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  const file = path.join(downloads, name);
  await download.saveAs(file);
  return { suggested: download.suggestedFilename(), file, url: download.url().slice(0, 5) };
}

await step('export', async () => {
  await answered();
  const tools = page.locator('#answer .answer-tools');
  const buttons = await tools.locator('button').allTextContents();
  const docx = await save(tools.locator('.export-button[data-format="docx"]'), 'answer.docx');
  const md = await save(tools.locator('.export-button[data-format="md"]'), 'answer.md');
  await shot('answer-tools');
  return { buttons, docx, md, answer: lastAnswer, label_after: await tools.locator('.export-button').first().textContent() };
});

await step('watch_quote', async () => {
  await answered();
  const first = page.locator('#answer li.bullet').first();
  const button = first.locator('.watch-button');
  const before = { text: await button.textContent(), pressed: await button.getAttribute('aria-pressed') };
  posted.length = 0;
  await button.click();
  await page.waitForFunction(() => document.querySelector('#answer li.bullet .watch-button').getAttribute('aria-pressed') === 'true');
  const after = { text: await button.textContent(), watch_id: await button.getAttribute('data-watch-id') };
  const request = posted[0];
  await answered(); // the same answer again: the quote is shown as watched already
  const again = await page.locator('#answer li.bullet').first().locator('.watch-button').textContent();
  return { before, after, request, again, announce: await page.locator('#announce').textContent() };
});

await step('watch_question', async () => {
  await answered();
  posted.length = 0;
  const button = page.locator('#answer .answer-tools .watch-button');
  await button.click();
  await page.waitForFunction(() => document.querySelector('#answer .answer-tools .watch-button').getAttribute('aria-pressed') === 'true');
  return { request: posted[0], text: await button.textContent() };
});

await step('document', async () => {
  await page.goto(`${url}?doc=nat-law-0072&article=${encodeURIComponent('第三条')}`);
  await page.locator('#article-body .document-tools').waitFor();
  const tools = page.locator('#article-body .document-tools');
  const buttons = await tools.locator('button').allTextContents();
  const cited = await page.locator('#article-body .doc-article.cited').first().getAttribute('data-article');
  posted.length = 0;
  await tools.locator('.watch-button', { hasText: '关注本文件' }).click();
  await page.waitForFunction(() => [...document.querySelectorAll('#article-body .document-tools .watch-button')]
    .some((b) => b.getAttribute('aria-pressed') === 'true'));
  // 第三条 was pressed since the fixture: the wait above may end before this POST's answer; the note ends it
  await tools.locator('.watch-told').first().waitFor({ timeout: 10000 }).catch(() => {});
  const told = await tools.locator('.watch-told').allTextContents();
  const versions = await save(tools.locator('.export-button[data-format="docx"]'), 'versions.docx');
  await shot('document-tools');
  return {
    title: await page.locator('#article-title').textContent(),
    cited,
    buttons,
    request: posted[0],
    pressed: await tools.locator('.watch-button[aria-pressed="true"]').allTextContents(),
    told,
    versions,
  };
});

await step('tab', async () => {
  await page.goto(url);
  await page.click('#tab-watch');
  await page.waitForFunction(() => document.querySelector('#watch-status').textContent.startsWith('关注'));
  const read = () => page.evaluate(() => ({
    status: document.querySelector('#watch-status').textContent,
    watches: [...document.querySelectorAll('#watch-list .watch-item')].map((li) => li.textContent),
    alerts: [...document.querySelectorAll('#alert-list .alert-item')].map((li) => ({
      text: li.textContent,
      href: li.querySelector('a') && li.querySelector('a').getAttribute('href'),
    })),
    feed: document.querySelector('#alert-feed').getAttribute('href'),
    visible: !document.querySelector('#watch-view').hidden && document.querySelector('#search-view').hidden,
  }));
  const before = await read();
  await shot('watch-tab');
  const count = before.watches.length;
  await page.locator('#watch-list .watch-item').last().locator('button').click();
  await page.waitForFunction((n) => document.querySelectorAll('#watch-list .watch-item').length === n - 1, count);
  const after = await read();
  // the alert's link opens the page at the document and article it is about now
  await page.locator('#alert-list .alert-item', { hasText: '条文修改' }).locator('a', { hasText: '查看原文' }).first().click();
  await page.locator('#article-body .document-tools').waitFor();
  const opened = {
    url: page.url(),
    title: await page.locator('#article-title').textContent(),
    cited: await page.locator('#article-body .doc-article.cited').first().getAttribute('data-article'),
  };
  await page.goto(`${url}#watches`);
  await page.waitForFunction(() => !document.querySelector('#watch-view').hidden);
  return { before, after, opened, deep_link: true };
});

await browser.close();
process.stdout.write(`${JSON.stringify(out)}\n`);
