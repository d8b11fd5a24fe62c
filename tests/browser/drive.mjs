// Drives the search page in headless Chromium and prints what it saw as one JSON object on stdout.
//
//   node tests/browser/drive.mjs <page-url> <screenshot-dir>
//
// tests/browser/test_page.py starts the server, runs this once and asserts on the JSON. Each step reloads
// the page so one failing step does not poison the next; a failing step records its error and a screenshot.
// Uses Debian's chromium (never a downloaded browser build: this network cannot reach the CDN).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [url, outDir] = process.argv.slice(2);
if (!url || !outDir) {
  console.error('usage: node drive.mjs <page-url> <screenshot-dir>');
  process.exit(2);
}
await mkdir(outDir, { recursive: true });

const QUESTION = '供电企业因计划检修需要停电，应当提前几天通知用户？';
const VERSION_QUESTION = '突发事件发生后，电力企业应当采取哪些应急措施？';
const OFF_TOPIC_QUESTION = '火星基地的氧气配额如何分配？';
// answered from the national corpus at low confidence (its words are everyday ones the statute does not use)
const LOW_CONFIDENCE_QUESTION = '供电企业和用户之间发生纠纷怎么办？';

const out = { steps: {}, errors: {}, screenshots: [], console: [], page_errors: [] };

// launch() gives every run a fresh temporary profile (Playwright's own --user-data-dir, removed on close);
// these flags stop Chromium from calling home, which this closed network refuses (and which would be slow).
const browser = await chromium.launch({
  executablePath: process.env.REGRAG_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--lang=zh-CN', // the UI language our users' browsers have (date inputs show 年/月/日)
  ],
});
const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, locale: 'zh-CN' });
context.setDefaultTimeout(10_000);
const page = await context.newPage();
page.on('console', (msg) => {
  if (msg.type() === 'error' || msg.type() === 'warning') out.console.push(`${msg.type()}: ${msg.text()}`);
});
page.on('pageerror', (err) => out.page_errors.push(String(err)));
let lastQuery = null;
let lastQueryUrl = null;
page.on('request', (req) => {
  if (req.method() === 'POST' && new URL(req.url()).pathname.endsWith('/query')) {
    lastQuery = req.postDataJSON();
    lastQueryUrl = req.url();
  }
});

/** A screenshot of the whole page (default), of the viewport (full: false) or of one locator (target). */
async function shot(name, { target = page, full = true } = {}) {
  const file = path.join(outDir, `${name}.png`);
  await target.screenshot({ path: file, ...(target === page ? { fullPage: full } : {}) });
  out.screenshots.push(file);
  return file;
}

async function step(name, fn) {
  try {
    out.steps[name] = await fn();
  } catch (err) {
    out.errors[name] = String(err && err.stack ? err.stack : err);
    try {
      await shot(`failed-${name}`);
    } catch {
      // the page may be gone; the error above says why
    }
  }
}

async function load() {
  await page.goto(url);
  await loaded();
}

async function loaded() {
  await page.locator('#corpus-list input[type="checkbox"]').first().waitFor();
  await page.waitForFunction(() => !document.querySelector('#corpus-hint').textContent.includes('正在加载'));
}

/** Ticks exactly `codes` in the province picker (opening it first, as a user would). */
async function pickProvinces(codes) {
  if (!(await page.$eval('#province-picker', (el) => el.open))) await page.click('#province-summary');
  for (const box of await page.$$('#province-list input')) {
    const code = await box.getAttribute('value');
    if (codes.includes(code)) await box.check();
    else await box.uncheck();
  }
}

async function search({ question, provinces = null, docClass = '', asOf = '', corpora = null }) {
  await page.fill('#question', question);
  if (provinces) await pickProvinces(provinces);
  await page.selectOption('#f-doc-class', docClass);
  await page.fill('#f-as-of', asOf);
  if (corpora) {
    await page.uncheck('#corpus-all');
    for (const name of corpora) await page.check(`#corpus-list input[value="${name}"]`);
  }
  lastQuery = null;
  await page.click('#search-button');
  const progress = await page.locator('#progress').isVisible();
  const progressText = await page.locator('#progress').textContent();
  // Done when the progress indicator is gone and something (answer or error) is on the page.
  await page.waitForFunction(() => document.querySelector('#progress').hidden
    && (!document.querySelector('#answer').hidden || !document.querySelector('#error').hidden));
  return { progress_visible: progress, progress_text: progressText, request: lastQuery, url: lastQueryUrl };
}

const texts = (selector) => page.locator(selector).allTextContents();

async function cards() {
  return page.$$eval('#corpus-status .card', (els) => els.map((el) => ({
    corpus: el.dataset.corpus,
    status: el.dataset.status,
    label: el.querySelector('.status-label').textContent,
    hits: el.querySelector('.hits').textContent,
    latency: el.querySelector('.latency').textContent,
    text: el.textContent,
  })));
}

/** Evidence that Chinese text is drawn with real glyphs, not tofu boxes. */
async function chineseRendering(selector) {
  const inPage = await page.evaluate((sel) => {
    const el = document.querySelector(sel);
    const style = getComputedStyle(el);
    const canvas = document.createElement('canvas');
    canvas.width = 48;
    canvas.height = 48;
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    ctx.font = `32px ${style.fontFamily}`;
    // Each character's pixels: real glyphs differ from each other and from U+E000, which no font here draws.
    const draw = (ch) => {
      ctx.clearRect(0, 0, 48, 48);
      ctx.fillText(ch, 4, 36);
      const data = ctx.getImageData(0, 0, 48, 48).data;
      let ink = 0;
      let hash = 0;
      for (let i = 3; i < data.length; i += 4) {
        if (data[i]) ink += 1;
        hash = (hash * 31 + data[i]) >>> 0;
      }
      return { ink, hash };
    };
    const glyphs = Object.fromEntries(['电', '力', '法', '条', '\uE000'].map((ch) => [ch, draw(ch)]));
    const box = el.getBoundingClientRect();
    return {
      font_family: style.fontFamily,
      lang: el.closest('[lang]').getAttribute('lang'),
      width: box.width,
      height: box.height,
      text: el.textContent,
      glyphs,
      fonts_check_noto: document.fonts.check('16px "Noto Sans CJK SC"'),
    };
  }, selector);
  // The fonts Chromium actually used for the node's text (DevTools protocol: what the Rendering tab shows).
  const cdp = await context.newCDPSession(page);
  const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
  const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector });
  await cdp.send('CSS.enable');
  const { fonts } = await cdp.send('CSS.getPlatformFontsForNode', { nodeId });
  await cdp.detach();
  return { ...inPage, platform_fonts: fonts };
}

await step('load', async () => {
  await load();
  return {
    lang: await page.getAttribute('html', 'lang'),
    charset: await page.evaluate(() => document.characterSet),
    title: await page.title(),
    corpora: await page.$$eval('#corpus-list input', (els) => els.map((el) => [el.value, el.checked])),
    search_disabled: await page.isDisabled('#search-button'),
    hint: await page.textContent('#corpus-hint'),
    options: await page.$$eval('select[data-filter]', (els) => Object.fromEntries(els.map((el) => [
      el.dataset.filter,
      [...el.options].map((o) => [o.value, o.textContent]),
    ]))),
    provinces: await page.$$eval('#province-list input', (els) => els.map((el) => [
      el.value, document.querySelector(`label[for="${el.id}"]`).firstChild.textContent, el.checked,
    ])),
    province_counts: await page.waitForSelector('#library', { state: 'visible' }).then(() => page.$$eval(
      '#province-list li', (els) => els.map((li) => [li.querySelector('input').value, li.querySelector('.count').textContent]),
    )),
    province_summary: await page.textContent('#province-summary'),
    province_label: await page.textContent('#province-label'),
    labels: await page.$$eval('label[for]', (els) => els.map((el) => [el.htmlFor, el.textContent.trim()])),
  };
});

await step('select_corpora', async () => {
  await load();
  await page.uncheck('#corpus-all');
  const none = {
    disabled: await page.isDisabled('#search-button'),
    hint: await page.textContent('#corpus-hint'),
    checked: await page.$$eval('#corpus-list input', (els) => els.filter((el) => el.checked).length),
  };
  await shot('no-corpus-selected');
  await page.check('#corpus-list input[value="national"]');
  const one = {
    disabled: await page.isDisabled('#search-button'),
    indeterminate: await page.$eval('#corpus-all', (el) => el.indeterminate),
    hint: await page.textContent('#corpus-hint'),
  };
  await page.check('#corpus-all');
  const all = {
    disabled: await page.isDisabled('#search-button'),
    checked: await page.$$eval('#corpus-list input', (els) => els.filter((el) => el.checked).length),
  };
  return { none, one, all };
});

await step('search', async () => {
  await load();
  const sent = await search({ question: QUESTION, provinces: ['national'], docClass: 'grid', asOf: '2020-01-01' });
  const result = {
    ...sent,
    answer_title: await page.textContent('.answer-title'),
    bullets: await page.$$eval('.bullet', (els) => els.map((el) => ({
      span: el.querySelector('.quote').textContent,
      marker: el.querySelector('.cite').textContent,
      article: el.querySelector('.article-badge').textContent,
      corpora: [...el.querySelectorAll('.corpus-badge')].map((b) => b.textContent),
    }))),
    incomplete: await texts('.incomplete'),
    meta: await page.textContent('.answer-meta'),
    search_meta: await page.textContent('#search-meta'),
    cards: await cards(),
    evidence: await page.$$eval('.evidence-item', (els) => els.map((el) => ({
      title: el.querySelector('.ev-title').textContent,
      article: el.querySelector('.article-badge').textContent,
      corpora: [...el.querySelectorAll('.corpus-badge')].map((b) => b.textContent),
      path: el.querySelector('.ev-path') ? el.querySelector('.ev-path').textContent : null,
    }))),
    error_hidden: await page.isHidden('#error'),
    announced: await page.textContent('#announce'),
    chinese: await chineseRendering('.answer-title'),
    quote_chinese: await chineseRendering('.bullet .quote'),
  };
  result.screenshot = await shot('results');
  await page.click('#details > summary');
  result.timeout_screenshot = await shot('corpus-status', { target: page.locator('#corpus-status') });
  result.results_text = await page.locator('#results').innerText();
  return result;
});

await step('article', async () => {
  // Opens the first bullet's citation: the article panel shows the whole document, the cited article marked.
  const cite = page.locator('.bullet .cite').first();
  await page.evaluate(() => document.addEventListener('click', (e) => {
    window.clickedTop = e.target.getBoundingClientRect().top;
    window.clicked = e.target;
  }, true));
  await cite.click();
  await page.locator('.doc-article.cited').first().waitFor();
  const result = {
    panel_title: await page.textContent('#article-title'),
    breadcrumb: await texts('.breadcrumb li'),
    cited: await page.$$eval('.doc-article.cited', (els) => els.map((el) => ({
      article: el.dataset.article,
      flag: el.querySelector('.cited-flag').textContent,
      text: [...el.querySelectorAll('p:not(.cited-flag)')].map((p) => p.textContent).join('\n'),
    }))),
    marked: await page.$$eval('.doc-article.cited mark', (els) => els.map((el) => el.textContent).join('')),
    articles_in_document: await page.locator('.doc-article').count(),
    headings: await texts('.doc-heading'),
    meta: await page.textContent('.doc-meta'),
    // Scrolled into the panel's view, below its sticky header, without scrolling the page itself.
    cited_in_view: await page.$eval('.doc-article.cited', (el) => {
      const box = el.getBoundingClientRect();
      const head = document.querySelector('#article-panel .panel-top').getBoundingClientRect();
      const panel = document.querySelector('#article-panel').getBoundingClientRect();
      return box.top >= head.bottom - 1 && box.top < Math.min(panel.bottom, window.innerHeight);
    }),
    // How far the clicked citation moved on screen: the reader keeps their place in the answer.
    citation_moved_px: await page.evaluate(() => Math.abs(window.clicked.getBoundingClientRect().top - window.clickedTop)),
    xrefs: await page.$$eval('.xref', (els) => els.map((el) => ({
      text: el.textContent,
      target_article: document.querySelector(el.getAttribute('href')).dataset.article,
      in_article: el.closest('.doc-article').dataset.article,
    }))),
  };
  result.screenshot = await shot('article', { full: false });
  result.panel_text = await page.locator('#article-panel').innerText();
  if (result.xrefs.length) {
    await page.locator('.xref').first().click();
    result.after_xref = {
      flashed: await page.$$eval('.doc-article.flash', (els) => els.map((el) => el.dataset.article)),
      focused: await page.evaluate(() => document.activeElement.dataset.article || null),
    };
  }
  await page.keyboard.press('Escape');
  result.closed = await page.isHidden('#article-panel');
  result.focus_back = await page.evaluate(() => document.activeElement.classList.contains('cite'));
  return result;
});

await step('scope', async () => {
  await load();
  await search({ question: `在上海，${QUESTION}` });
  return { meta: await page.textContent('.answer-meta'), scope_notes: await texts('.scope-note') };
});

await step('versions', async () => {
  await load();
  await search({ question: VERSION_QUESTION, asOf: '2020-01-01' });
  const result = {
    notes: await texts('.notes li'),
    version_badges: await texts('.version-badge'),
    counterparts: await texts('.counterpart summary'),
    answer_text: await page.textContent('#answer'),
  };
  const superseded = page.locator('.bullet', { has: page.locator('.version-superseded_since') }).first();
  if (await superseded.count()) {
    result.marker = await superseded.locator('.cite').textContent();
    await superseded.locator('.cite').click();
    await page.locator('.versions li').first().waitFor();
    result.versions = await texts('.versions > ol > li');
    result.changes = await texts('.changes summary');
    result.meta = await texts('.doc-meta dd');
    result.status = await page.textContent('.doc-meta .version-badge');
    result.cited = await page.$$eval('.doc-article.cited', (els) => els.map((el) => el.dataset.article));
    result.screenshot = await shot('versions', { full: false });
  }
  return result;
});

await step('window', async () => {
  // promulgated 2024-06-28, in force from 2024-11-01: on 2024-08-01 the older version is the law
  await load();
  await search({ question: VERSION_QUESTION, asOf: '2024-08-01' });
  return {
    notes: await texts('.notes li'),
    version_badges: await texts('.version-badge'),
    temporal: await texts('.temporal-note'),
  };
});

await step('future', async () => {
  // a day still to come: the answer is the law as known today, and says so
  await load();
  await search({ question: VERSION_QUESTION, asOf: '2035-06-01' });
  return { notes: await texts('.notes li'), temporal: await texts('.temporal-note') };
});

await step('abstain', async () => {
  await load();
  await search({ question: OFF_TOPIC_QUESTION });
  const result = {
    abstain_visible: await page.isVisible('.abstain'),
    abstain_text: await page.textContent('.abstain'),
    bullets: await page.locator('.bullet').count(),
    evidence_folded: await page.locator('#evidence details').count(),
  };
  result.screenshot = await shot('abstain');
  return result;
});

await step('low_confidence', async () => {
  await load();
  await search({ question: LOW_CONFIDENCE_QUESTION, corpora: ['national'] });
  const low = {
    caution: await page.locator('#answer .caution').allTextContents(),
    // the caution is read before the first quote: it precedes it in the document
    caution_first: await page.evaluate(() => {
      const caution = document.querySelector('#answer .caution');
      const quote = document.querySelector('#answer .bullet');
      return Boolean(caution && quote && (caution.compareDocumentPosition(quote) & Node.DOCUMENT_POSITION_FOLLOWING));
    }),
    bullets: await page.locator('.bullet').count(),
    notes_heading: await page.locator('#answer .notes h4').allTextContents(),
  };
  low.screenshot = await shot('low-confidence');
  await search({ question: QUESTION, corpora: ['national'] });
  low.caution_when_not_low = await page.locator('#answer .caution').count();
  low.level_when_not_low = await page.textContent('#search-meta');
  return low;
});

await step('picker_folds', async () => {
  await load();
  await search({ question: QUESTION, provinces: ['national', 'sh'] });
  return {
    open_after_search: await page.$eval('#province-picker', (el) => el.open),
    summary: await page.textContent('#province-summary'),
    // the list scrolls inside its box instead of growing the form by 32 rows
    list_overflow: await page.$eval('#province-list', (el) => getComputedStyle(el).overflowY),
    // opened again, the tall list must not drag the checkbox beside the date down to the middle of its row
    superseded_offset: await (async () => {
      await page.click('#province-picker > summary');
      await shot('filters-open', { target: page.locator('fieldset.filters') });
      const box = async (sel) => (await page.locator(sel).boundingBox()).y;
      return Math.round((await box('#f-include-superseded')) - (await box('#f-as-of')));
    })(),
  };
});

await step('errors', async () => {
  await load();
  await page.fill('#question', '');
  await page.click('#search-button');
  const empty = await page.textContent('#error');
  // punctuation alone asks nothing (a new user's ？？？ was told to ask in Chinese)
  await page.fill('#question', '？？？');
  await page.click('#search-button');
  const noWords = await page.textContent('#error');

  await search({ question: '电'.repeat(2001) });
  const tooLong = {
    error: await page.textContent('#error'),
    counter: await page.textContent('#question-count'),
    answer_hidden: await page.isHidden('#answer'),
  };
  await shot('error-too-long');

  // a request the server refuses: its message is shown under the page's own heading
  await page.route('**/query', (route) => route.fulfill({
    status: 400,
    contentType: 'application/json',
    body: JSON.stringify({ error: { code: 'invalid_input', message: "filters.as_of='2020-13-01' is not a valid date" } }),
  }));
  await search({ question: QUESTION });
  const refused = await page.textContent('#error');
  await page.unroute('**/query');
  await shot('error-400');

  // Cancel while the slow corpus keeps the request open.
  await page.fill('#question', QUESTION);
  await page.click('#search-button');
  await page.click('#cancel-button');
  await page.locator('#error').waitFor();
  const cancelled = {
    error: await page.textContent('#error'),
    progress_hidden: await page.isHidden('#progress'),
    search_enabled: await page.isEnabled('#search-button'),
    announced: await page.textContent('#announce'),
  };

  await page.route('**/query', (route) => route.abort('connectionrefused'));
  await search({ question: QUESTION });
  const network = await page.textContent('#error');
  await page.unroute('**/query');

  await search({ question: QUESTION, corpora: ['shanghai'] });
  const allFailed = { error: await page.textContent('#error'), cards: await cards() };
  await shot('error-503');
  return { empty, no_words: noWords, too_long: tooLong, refused, cancelled, network, all_failed: allFailed };
});

await step('answer_first', async () => {
  // A phone: the quotes come first; how they were found stays folded until asked for.
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await load();
    // an empty question's message is brought onto the screen, not left below the form
    await page.fill('#question', '');
    await page.click('#search-button');
    await page.waitForSelector('#error:not([hidden])');
    const emptyError = await page.$eval('#error', (el) => {
      const r = el.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, viewport: window.innerHeight };
    });
    await load();
    await search({ question: QUESTION });
    const box = (sel) => page.$eval(sel, (el) => {
      const r = el.getBoundingClientRect();
      return { top: r.top + window.scrollY, height: r.height, visible: r.height > 0 };
    });
    const folded = {
      answer: await box('#answer'),
      first_quote: await box('.bullet .quote'),
      details: await box('#details'),
      details_open: await page.$eval('#details', (el) => el.open),
      summary: await page.textContent('#details > summary'),
      cards_visible: await page.locator('#corpus-status .card').first().isVisible(),
      evidence_visible: await page.locator('.evidence-item').first().isVisible(),
      page_height: await page.evaluate(() => document.documentElement.scrollHeight),
    };
    const screenshot = await shot('phone-answer');
    await page.click('#details > summary');
    const opened = {
      cards_visible: await page.locator('#corpus-status .card').first().isVisible(),
      evidence_visible: await page.locator('.evidence-item').first().isVisible(),
      page_height: await page.evaluate(() => document.documentElement.scrollHeight),
    };
    return { folded, opened, screenshot, empty_error: emptyError };
  } finally {
    await page.setViewportSize({ width: 1400, height: 1000 });
  }
});

await step('provinces', async () => {
  await load();
  await page.fill('#question', QUESTION);
  await page.click('#province-summary');
  await page.check('#f-province-sh');
  const ticked = {
    national: await page.isChecked('#f-province-national'),
    summary: await page.textContent('#province-summary'),
  };
  lastQuery = null;
  await page.click('#search-button');
  await page.waitForFunction(() => document.querySelector('#progress').hidden && !document.querySelector('#answer').hidden);
  const withNational = { request: lastQuery, address: page.url() };
  await page.click('#province-summary'); // the search folded the list: opened again to change the choice
  await page.uncheck('#f-province-national');
  await page.check('#f-province-gd');
  lastQuery = null;
  await page.click('#search-button');
  await page.waitForFunction(() => document.querySelector('#progress').hidden
    && (!document.querySelector('#answer').hidden || !document.querySelector('#error').hidden));
  const withoutNational = {
    request: lastQuery,
    national: await page.isChecked('#f-province-national'),
    address: page.url(),
  };
  // ticked by the page with a province, national rules go with the last province unticked: no filter is left
  await load();
  await page.click('#province-summary');
  await page.check('#f-province-sh');
  await page.uncheck('#f-province-sh');
  const untickedAll = {
    national: await page.isChecked('#f-province-national'),
    summary: await page.textContent('#province-summary'),
  };
  return { ticked, with_national: withNational, without_national: withoutNational, unticked_all: untickedAll };
});

await step('library', async () => {
  // which documents can be asked about: folded under the corpora, each opening the document view
  await load();
  await page.waitForSelector('#library', { state: 'visible' });
  const summary = await page.textContent('#library-summary');
  await page.click('#library-summary');
  await page.locator('.library-corpus').first().waitFor();
  const corpora = await page.$$eval('.library-corpus', (els) => els.map((el) => el.textContent));
  const docs = await page.$$eval('.library-doc', (els) => els.map((el) => el.textContent));
  await shot('library');
  await page.locator('.library-doc', { hasText: '上海市供用电条例' }).locator('button').click();
  await page.locator('#article-body .document-tools').waitFor();
  const names = await page.$$eval('#corpus-list label', (els) => els.map((el) => el.textContent));
  const opened = await page.textContent('#article-title');
  // on a phone the document view opens below everything: the page goes to it
  await page.setViewportSize({ width: 390, height: 844 });
  let phoneTop = null;
  try {
    await load();
    await page.waitForSelector('#library', { state: 'visible' });
    await page.click('#library-summary');
    await page.locator('.library-corpus').first().waitFor();
    await page.locator('.library-doc', { hasText: '上海市供用电条例' }).locator('button').click();
    await page.locator('#article-body .document-tools').waitFor();
    phoneTop = await page.$eval('#article-panel', (el) => el.getBoundingClientRect().top);
    await shot('library-phone');
  } finally {
    await page.setViewportSize({ width: 1400, height: 1000 });
  }
  return { summary, corpora, docs, names, opened, phone_top: phoneTop };
});

await step('shared_address', async () => {
  // The address of a search, opened again (a colleague's link): the form is as it was and the question is asked.
  const shared = new URL(url);
  shared.search = new URLSearchParams({
    q: QUESTION, province: 'sh,national', doc_class: 'grid', as_of: '2020-01-01', corpora: 'national,shanghai',
  }).toString();
  lastQuery = null;
  await page.goto(shared.href);
  await loaded();
  await page.waitForFunction(() => document.querySelector('#progress').hidden
    && (!document.querySelector('#answer').hidden || !document.querySelector('#error').hidden));
  return {
    request: lastQuery,
    question: await page.inputValue('#question'),
    provinces: await page.$$eval('#province-list input:checked', (els) => els.map((el) => el.value)),
    doc_class: await page.inputValue('#f-doc-class'),
    as_of: await page.inputValue('#f-as-of'),
    corpora: await page.$$eval('#corpus-list input:checked', (els) => els.map((el) => el.value)),
  };
});

await step('copy', async () => {
  // What 复制引文 puts on the clipboard: the quote and its complete citation, article included.
  await load();
  await page.evaluate(() => {
    window.copied = [];
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: { writeText: async (text) => { window.copied.push(text); } },
    });
  });
  await search({ question: QUESTION, provinces: ['national'] });
  const first = page.locator('.bullet').first();
  await first.locator('.copy').click();
  await page.waitForFunction(() => window.copied.length > 0);
  return {
    copied: await page.evaluate(() => window.copied[0]),
    span: await first.locator('.quote').textContent(),
    marker: await first.locator('.cite').textContent(),
    button: await first.locator('.copy').textContent(),
  };
});

await step('cross_origin', async () => {
  // The page as a separately hosted service: ?api= points it at another origin (the same server, named
  // localhost instead of 127.0.0.1), so every call is a real cross-origin request with a CORS preflight.
  const pageUrl = new URL(url);
  const api = `${pageUrl.protocol}//localhost:${pageUrl.port}`;
  await page.goto(`${url}?api=${encodeURIComponent(api)}`);
  await loaded();
  const sent = await search({ question: QUESTION, provinces: ['national'] });
  return {
    api,
    note: await page.textContent('#api-origin'),
    note_visible: await page.isVisible('#api-origin'),
    corpora: await page.locator('#corpus-list input').count(),
    query_url: sent.url,
    markers: await texts('.bullet .cite'),
    error_hidden: await page.isHidden('#error'),
  };
});

await browser.close();
process.stdout.write(`${JSON.stringify(out)}\n`);
