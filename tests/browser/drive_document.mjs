// Opens documents in the search page's document view (the article panel) in headless Chromium and prints what
// its metadata list shows as one JSON object on stdout.
//
//   node tests/browser/drive_document.mjs <page-url> <screenshot-dir> <doc_id>...
//
// tests/browser/test_document_view.py starts the server and asserts on the JSON. The panel is opened the way
// a citation opens it (the page's openArticle), without a search: the view is checked apart from the answer.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [url, outDir, ...docIds] = process.argv.slice(2);
if (!url || !outDir || !docIds.length) {
  console.error('usage: node drive_document.mjs <page-url> <screenshot-dir> <doc_id>...');
  process.exit(2);
}
await mkdir(outDir, { recursive: true });

const out = { documents: {}, errors: {}, page_errors: [] };
const browser = await chromium.launch({
  executablePath: process.env.REGRAG_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--lang=zh-CN'],
});
const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, locale: 'zh-CN' });
context.setDefaultTimeout(10_000);
const page = await context.newPage();
page.on('pageerror', (err) => out.page_errors.push(String(err)));

for (const docId of docIds) {
  try {
    await page.goto(url);
    await page.waitForFunction(() => typeof openArticle === 'function');
    await page.evaluate((id) => openArticle({ doc_id: id }), docId);
    await page.locator('#article-body .doc-meta').waitFor();
    out.documents[docId] = {
      title: await page.textContent('#article-title'),
      rows: await page.$$eval('#article-body .doc-meta dt', (dts) => dts.map((dt) => [
        dt.textContent, dt.nextElementSibling.textContent])),
      notes: await page.$$eval('#article-body .doc-meta .meta-note', (els) => els.map((el) => el.textContent)),
    };
    const file = path.join(outDir, `document-${docId}.png`);
    await page.locator('#article-panel').screenshot({ path: file });
  } catch (err) {
    out.errors[docId] = String(err && err.stack ? err.stack : err);
  }
}
await browser.close();
console.log(JSON.stringify(out));
