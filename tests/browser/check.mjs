// Drives the 引用核验 tab of the page in headless Chromium and prints what it saw as one JSON object.
//
//   node tests/browser/check.mjs <page-url> <screenshot-dir> <memo.md> <binary-file>
//
// tests/browser/test_check_page.py starts the server, runs this once and asserts on the JSON. Each step reloads
// the page; a failing step records its error and a screenshot. Uses Debian's chromium.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [url, outDir, memoFile, binaryFile] = process.argv.slice(2);
if (!url || !outDir || !memoFile || !binaryFile) {
  console.error('usage: node check.mjs <page-url> <screenshot-dir> <memo.md> <binary-file>');
  process.exit(2);
}
await mkdir(outDir, { recursive: true });
const memo = await readFile(memoFile, 'utf-8');

const out = { steps: {}, errors: {}, screenshots: [], console: [], page_errors: [] };
const browser = await chromium.launch({
  executablePath: process.env.REGRAG_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--lang=zh-CN',
  ],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, locale: 'zh-CN' });
context.setDefaultTimeout(10_000);
const page = await context.newPage();
page.on('console', (msg) => {
  if (msg.type() === 'error') out.console.push(`${msg.type()}: ${msg.text()}`);
});
page.on('pageerror', (err) => out.page_errors.push(String(err)));
let lastCheck = null;
page.on('request', (req) => {
  if (req.method() === 'POST' && new URL(req.url()).pathname.endsWith('/check')) {
    lastCheck = { content_type: req.headers()['content-type'] || '', body: req.postData() };
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

async function openTab() {
  await page.goto(url);
  await page.click('#tab-check');
  await page.locator('#check-form').waitFor();
}

async function submitAndWait() {
  lastCheck = null;
  await page.click('#check-button');
  await page.waitForFunction(() => {
    const p = document.querySelector('#check-progress').textContent;
    return p.startsWith('核验完成') || p.startsWith('核验未完成');
  });
}

async function results() {
  return page.evaluate(() => ({
    summary: document.querySelector('#check-summary').textContent,
    progress: document.querySelector('#check-progress').textContent,
    cards: [...document.querySelectorAll('#check-list .check-card')].map((el) => ({
      status: el.dataset.status,
      caution: el.dataset.caution === '1',
      tone: [...el.classList].find((c) => c.startsWith('tone-')),
      flag: el.querySelector('.check-caution') ? el.querySelector('.check-caution').textContent : null,
      label: el.querySelector('.check-badge').textContent,
      ref: el.querySelector('.check-ref').textContent,
      message: el.querySelector('.check-message').textContent,
      deleted: [...el.querySelectorAll('.check-diff del')].map((d) => d.textContent),
      inserted: [...el.querySelectorAll('.check-diff ins')].map((d) => d.textContent),
      law: [...el.querySelectorAll('.check-law')].map((d) => d.textContent),
      visible: !el.hidden,
    })),
    marks: [...document.querySelectorAll('#check-document-text .check-span')].map((el) => ({
      text: el.textContent, status: el.dataset.status, href: el.getAttribute('href'),
      tone: [...el.classList].find((c) => c.startsWith('tone-')),
    })),
    error_hidden: document.querySelector('#check-error').hidden,
  }));
}

await step('tabs', async () => {
  await page.goto(url);
  const before = {
    search_visible: await page.isVisible('#search-view'),
    check_visible: await page.isVisible('#check-view'),
    selected: await page.getAttribute('#tab-search', 'aria-selected'),
  };
  await page.click('#tab-check');
  const after = {
    search_visible: await page.isVisible('#search-view'),
    check_visible: await page.isVisible('#check-view'),
    selected: await page.getAttribute('#tab-check', 'aria-selected'),
    hash: new URL(page.url()).hash,
    labels: await page.evaluate(() => [...document.querySelectorAll('#check-form label')].map((l) => l.textContent)),
  };
  await page.focus('#tab-check');
  await page.keyboard.press('ArrowLeft');
  const keyboard = {
    search_visible: await page.isVisible('#search-view'),
    focused: await page.evaluate(() => document.activeElement.id),
  };
  await page.goto(`${url}#check`);
  const deepLink = await page.isVisible('#check-view');
  return { before, after, keyboard, deep_link: deepLink };
});

await step('check_text', async () => {
  await openTab();
  await page.fill('#check-text', memo);
  await submitAndWait();
  const seen = await results();
  const request = lastCheck;
  await shot('check-text');
  await page.check('#check-problems-only');
  const problemsOnly = await page.$$eval('#check-list .check-card', (els) => els.filter((e) => !e.hidden).length);
  // a mark in the document jumps to its card
  await page.click('#check-document summary');
  await page.click('#check-document-text .check-span.tone-bad >> nth=0');
  const focused = await page.evaluate(() => document.activeElement.id);
  return { ...seen, request, problems_only: problemsOnly, focused_after_mark: focused };
});

await step('check_upload', async () => {
  await openTab();
  await page.setInputFiles('#check-file', memoFile);
  await page.fill('#check-as-of', '2020-01-01');
  await submitAndWait();
  return { ...(await results()), content_type: lastCheck && lastCheck.content_type };
});

await step('check_errors', async () => {
  await openTab();
  await page.setInputFiles('#check-file', binaryFile);
  await submitAndWait();
  const binary = await page.textContent('#check-error');
  await page.click('#check-clear');
  await page.click('#check-button');
  await page.waitForFunction(() => !document.querySelector('#check-error').hidden);
  const empty = await page.textContent('#check-error');
  await page.fill('#check-text', '本合同第三条约定的价款应于十日内付清。');
  await submitAndWait();
  const none = await results();
  await shot('check-errors');
  return { binary, empty, none };
});

await browser.close();
process.stdout.write(`${JSON.stringify(out)}\n`);
