// The regrag search page: plain DOM code, no framework, no build step, nothing fetched from a CDN.
// Every string that comes from the API enters the page as a text node or an attribute value, never as HTML,
// so a regulation's text (or a hostile API) cannot inject markup.
'use strict';

const MAX_QUESTION_CHARS = 2000; // regrag.pipeline.query.MAX_QUESTION_CHARS; the server stays the authority

// Filter vocabularies: keys are the codes the API accepts (regrag.pipeline.filters), values the labels users
// read. Strict JSON between the markers: tests/browser/test_static.py checks it against the Python lists.
const VOCAB = /* vocab:begin */ {
  "province": {
    "national": "全国", "bj": "北京", "tj": "天津", "he": "河北", "sx": "山西", "nm": "内蒙古", "ln": "辽宁",
    "jl": "吉林", "hl": "黑龙江", "sh": "上海", "js": "江苏", "zj": "浙江", "ah": "安徽", "fj": "福建",
    "jx": "江西", "sd": "山东", "ha": "河南", "hb": "湖北", "hn": "湖南", "gd": "广东", "gx": "广西",
    "hi": "海南", "cq": "重庆", "sc": "四川", "gz": "贵州", "yn": "云南", "xz": "西藏", "sn": "陕西",
    "gs": "甘肃", "qh": "青海", "nx": "宁夏", "xj": "新疆"
  },
  "asset": {
    "solar": "光伏", "wind": "风电", "coal": "煤炭", "hydro": "水电", "nuclear": "核电", "grid": "电网",
    "general": "综合"
  },
  "doc_class": {
    "grid": "电网与供用电", "permit": "行政许可", "technical": "技术标准", "energy": "能源综合",
    "environment": "生态环境", "land": "土地", "safety": "安全生产", "general": "其他"
  },
  "regulation_level": {
    "national_law": "法律", "administrative_regulation": "行政法规", "departmental_rule": "部门规章",
    "local_regulation": "地方性法规", "unknown": "未标注"
  }
} /* vocab:end */;

const CORPUS_STATUS = { ok: '正常', timeout: '超时', error: '出错' };
const RERANK_STATUS = { ok: '已按相关性重新排序', skipped: '未重新排序（按检索得分排列）' };

const state = {
  api: '', // API base URL without a trailing slash; '' is this page's origin
  corpora: undefined, // undefined: loading; null: list unavailable (search all); else [{corpus, documents, chunks}]
  controller: null, // AbortController of the search in flight
  articleToken: 0, // ignores an article that arrives after the user asked for another one
  lastTrigger: null, // the button that opened the article panel (focus returns there on close)
  documents: new Map(), // doc_id → Promise of GET /documents/<id>
  nationalTouched: false, // the user ticked or unticked national rules themselves: leave that choice alone
  urlCorpora: null, // the corpora a shared address names (null: all)
  library: undefined, // GET /documents's list (null: unavailable)
  askOnLoad: false, // the address names a question: ask it once the corpora are known
};

const $ = (selector) => document.querySelector(selector);
const STACKED = '(max-width: 900px)'; // style.css: below this width the document view opens under the answer

// fill, h and apiBase: dom.js

// --- API --------------------------------------------------------------------------------------------------

// ApiError and api: dom.js


/** A message for the error box that is not a failure of the page (an empty question, a cancelled search). */
function notice(title, message) {
  return Object.assign(new Error(message), { title });
}

function errorTitle(err) {
  if (err.title) return err.title;
  if (!(err instanceof ApiError)) return '页面出错';
  if (err.status === 0) return '网络错误';
  if (err.status === 400) return `请求无效，请检查问题和筛选条件（HTTP ${err.status}）`;
  if (err.status === 404) return `未找到（HTTP ${err.status}）`;
  if (err.status === 503) return `服务暂不可用（HTTP ${err.status}）`;
  return `请求失败（HTTP ${err.status}）`;
}

function errorBox(err) {
  return h('div', { class: 'error-box' },
    h('p', { class: 'error-title' }, errorTitle(err)),
    h('p', { class: 'error-message' }, err.message || String(err)),
    err instanceof ApiError && err.code ? h('p', { class: 'error-code' }, `错误代码：${err.code}`) : null);
}

// --- search form --------------------------------------------------------------------------------------------

function fillFilterSelects() {
  for (const select of document.querySelectorAll('select[data-filter]')) {
    select.append(h('option', { value: '' }, '不限'));
    for (const [code, label] of Object.entries(VOCAB[select.dataset.filter])) {
      select.append(h('option', { value: code }, label));
    }
  }
  fillProvinces();
}

// --- provinces: several at once, national rules included unless unticked ---------------------------------

function provinceBoxes() {
  return [...document.querySelectorAll('#province-list input[type="checkbox"]')];
}

function fillProvinces() {
  const option = (code, label, extra) => {
    const id = `f-province-${code}`;
    return h('li', { class: code === 'national' ? 'national' : null },
      h('input', { type: 'checkbox', id, value: code, dataset: { province: code }, onchange: onProvinceChange, ...extra }),
      h('label', { for: id }, label));
  };
  const provinces = Object.entries(VOCAB.province).filter(([code]) => code !== 'national');
  fill($('#province-list'),
    option('national', '全国性规定（法律、行政法规、部门规章）'),
    provinces.map(([code, label]) => option(code, label)));
  updateProvinceSummary();
}

/** A project in one province is bound by national law too: ticking the first province ticks national rules,
 * unless the user has unticked them on purpose; unticking the last one unticks them again (left ticked, they
 * would narrow the next search to national rules, which the user never chose). */
function onProvinceChange(event) {
  const box = event.currentTarget;
  const national = $('#f-province-national');
  if (box === national) state.nationalTouched = true;
  else if (!state.nationalTouched) {
    const others = provinceBoxes().filter((b) => b !== national && b !== box && b.checked);
    if (!others.length) national.checked = box.checked;
  }
  updateProvinceSummary();
}

/** How many documents in force each province has (GET /documents), beside its name: a province the library holds
 * nothing of is shown so, and listed after those it holds. */
function showProvinceCounts(counts) {
  const list = $('#province-list');
  const items = [...list.children];
  for (const li of items) {
    const code = li.querySelector('input').value;
    const n = counts[code] || 0;
    const label = li.querySelector('label');
    label.querySelector('.count')?.remove();
    label.append(h('span', { class: 'count' }, n ? `${n} 部现行` : '库中无文件'));
    li.classList.toggle('empty', !n);
  }
  const rank = (li) => (li.classList.contains('national') ? 0 : li.classList.contains('empty') ? 2 : 1);
  list.replaceChildren(...items.map((li, i) => [li, i]).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1])
    .map(([li]) => li));
}

// --- the library: which documents can be asked about ------------------------------------------------------------

const STATUS_LABEL = { in_force: '现行', superseded: '已被取代', not_yet_in_force: '尚未施行' };

async function loadLibrary() {
  try {
    const data = await api('/documents');
    state.library = data.documents || [];
    showProvinceCounts(data.in_force_by_province || {});
    nameCorpora();
    $('#library-summary').replaceChildren(`库中文件（${state.library.length} 部）`);
    $('#library').hidden = false;
  } catch {
    state.library = null; // the list is a help for choosing; searching does not need it
  }
}

/** A corpus is named as its operator named it (shanghai): beside the name, the place its documents are of, when
 * they are all of one (上海, 全国), so the reader need not know the operator's naming. */
function nameCorpora() {
  const places = new Map();
  for (const doc of state.library || []) {
    if (!places.has(doc.corpus)) places.set(doc.corpus, new Set());
    places.get(doc.corpus).add(doc.province);
  }
  for (const name of document.querySelectorAll('#corpus-list .corpus-name')) {
    const found = [...(places.get(name.textContent) || [])];
    if (found.length !== 1 || name.nextElementSibling?.classList.contains('corpus-place')) continue;
    name.after(h('span', { class: 'corpus-place' }, `（${placeName(found[0])}）`));
  }
}

function renderLibrary() {
  if (!state.library || $('#library-list').childElementCount) return;
  const groups = new Map();
  for (const doc of state.library) {
    if (!groups.has(doc.corpus)) groups.set(doc.corpus, []);
    groups.get(doc.corpus).push(doc);
  }
  $('#library-list').replaceChildren(...[...groups].map(([corpus, docs]) => h('li', null,
    h('span', { class: 'library-corpus' }, `${corpus}（${docs.length}）`),
    h('ul', null, docs.map((doc) => h('li', { class: `library-doc ${doc.status}` },
      h('button', {
        type: 'button',
        class: 'link-button',
        title: '查看原文',
        onclick: (e) => openArticle({ doc_id: doc.doc_id }, e.currentTarget),
      }, `《${doc.title}》`),
      h('span', { class: 'library-meta' },
        `${placeName(doc.province)} · `
        + `施行 ${doc.effective_date || '日期不详'}${doc.effective_date_uncertain ? '（待核）' : ''}`
        + ` · ${STATUS_LABEL[doc.status] || doc.status}`)))))));
}

/** A province code as a reader names it (sh → 上海, national → 全国; an unknown code as it is). */
function placeName(code) {
  return code === 'national' ? '全国' : VOCAB.province[code] || code;
}

function selectedProvinces() {
  return provinceBoxes().filter((box) => box.checked).map((box) => box.value);
}

function updateProvinceSummary() {
  const chosen = selectedProvinces();
  $('#province-summary').replaceChildren(chosen.length
    ? chosen.map(placeName).join('、')
    : '不限');
}

function setProvinces(codes) {
  for (const box of provinceBoxes()) box.checked = codes.includes(box.value);
  // a shared link that leaves national rules out did so on purpose
  state.nationalTouched = codes.length > 0 && !codes.includes('national');
  updateProvinceSummary();
}

function readFilters() {
  const filters = {};
  for (const select of document.querySelectorAll('select[data-filter]')) {
    if (select.value) filters[select.dataset.filter] = [select.value];
  }
  const provinces = selectedProvinces();
  if (provinces.length) filters.province = provinces;
  const asOf = $('#f-as-of').value;
  if (asOf) filters.as_of = asOf;
  if ($('#f-include-superseded').checked) filters.include_superseded = true;
  return filters;
}

// --- the search in the page's address, so it can be shared ------------------------------------------------

const URL_FILTERS = ['asset', 'doc_class', 'regulation_level'];

/** ?q=…&province=sh,national&as_of=… for the search just made (the API base, ?api=, is kept). */
function writeUrl(body) {
  const params = new URLSearchParams();
  const kept = new URLSearchParams(window.location.search).get('api');
  if (kept) params.set('api', kept);
  params.set('q', body.question);
  const f = body.filters || {};
  if (f.province) params.set('province', f.province.join(','));
  for (const key of URL_FILTERS) if (f[key]) params.set(key, f[key].join(','));
  if (f.as_of) params.set('as_of', f.as_of);
  if (f.include_superseded) params.set('include_superseded', '1');
  if (body.corpora && state.corpora && body.corpora.length < state.corpora.length) {
    params.set('corpora', body.corpora.join(','));
  }
  window.history.replaceState(null, '', `${window.location.pathname}?${params}`);
}

/** The form as a shared address describes it; true when it names a question (which is then asked). */
function readUrl() {
  const params = new URLSearchParams(window.location.search);
  const list = (key) => (params.get(key) || '').split(',').map((v) => v.trim()).filter(Boolean);
  if (params.has('province')) setProvinces(list('province'));
  for (const key of URL_FILTERS) {
    const select = document.querySelector(`select[data-filter="${key}"]`);
    const value = list(key)[0];
    if (select && value && [...select.options].some((o) => o.value === value)) select.value = value;
  }
  if (params.get('as_of')) $('#f-as-of').value = params.get('as_of');
  $('#f-include-superseded').checked = params.get('include_superseded') === '1';
  state.urlCorpora = params.has('corpora') ? list('corpora') : null;
  const question = params.get('q');
  if (question) {
    $('#question').value = question;
    updateCounter();
  }
  return Boolean(question);
}

function corpusBoxes() {
  return [...document.querySelectorAll('#corpus-list input[type="checkbox"]')];
}

function selectedCorpora() {
  return corpusBoxes().filter((box) => box.checked).map((box) => box.value);
}

async function loadCorpora() {
  try {
    const data = await api('/corpora');
    state.corpora = Array.isArray(data.corpora) ? data.corpora : [];
    renderCorpora();
    nameCorpora(); // the library may have come first
    if (state.urlCorpora) {
      for (const box of corpusBoxes()) box.checked = state.urlCorpora.includes(box.value);
    }
  } catch (err) {
    // Without the list the search still works: leaving `corpora` out of the request searches every corpus.
    state.corpora = null;
    $('#corpus-hint').replaceChildren(`无法加载语料库列表：${err.message}。检索将覆盖全部语料库。`);
    $('#corpus-hint').classList.add('warn');
  }
  updateSearchState();
  if (state.askOnLoad) {
    state.askOnLoad = false;
    if (!$('#search-button').disabled) $('#search-form').requestSubmit();
  }
}

function renderCorpora() {
  const list = $('#corpus-list');
  list.replaceChildren(...state.corpora.map((row, i) => {
    const id = `corpus-${i}`;
    return h('li', { class: 'corpus-option' },
      h('input', { type: 'checkbox', id, value: row.corpus, checked: true, onchange: updateSearchState }),
      h('label', { for: id },
        h('span', { class: 'corpus-name' }, row.corpus),
        h('span', { class: 'corpus-counts' }, `${row.documents ?? '?'} 部文件 · ${row.chunks ?? '?'} 条`)));
  }));
  $('#corpus-all').disabled = state.corpora.length === 0;
}

function updateSearchState() {
  const boxes = corpusBoxes();
  const selected = boxes.filter((box) => box.checked).length;
  const all = $('#corpus-all');
  all.checked = boxes.length > 0 && selected === boxes.length;
  all.indeterminate = selected > 0 && selected < boxes.length;

  const hint = $('#corpus-hint');
  let blocked = '';
  if (state.corpora === undefined) blocked = '正在加载语料库列表…';
  else if (Array.isArray(state.corpora) && state.corpora.length === 0) {
    blocked = '索引中还没有任何文件，请先导入语料（make ingest）。';
  } else if (Array.isArray(state.corpora) && selected === 0) blocked = '请至少选择一个语料库，才能检索。';
  if (blocked) {
    hint.replaceChildren(blocked);
    hint.classList.add('warn');
  } else if (Array.isArray(state.corpora)) {
    hint.replaceChildren(`已选择 ${selected} / ${boxes.length} 个语料库。`);
    hint.classList.remove('warn');
  }
  $('#search-button').disabled = Boolean(blocked) || state.controller !== null;
}

function updateCounter() {
  const count = [...$('#question').value].length;
  const counter = $('#question-count');
  const over = count > MAX_QUESTION_CHARS;
  counter.replaceChildren(over
    ? `${count} / ${MAX_QUESTION_CHARS} 字：超出上限，请删减后再检索。`
    : `${count} / ${MAX_QUESTION_CHARS} 字`);
  counter.classList.toggle('warn', over);
}

// --- searching ----------------------------------------------------------------------------------------------

function clearResults() {
  for (const id of ['#error', '#answer', '#search-meta', '#corpus-status', '#evidence']) {
    $(id).replaceChildren();
    $(id).hidden = id !== '#search-meta';
  }
  $('#details').hidden = true;
  $('#details').open = false;
}

/** On a phone the form fills the screen: bring what a search shows up rather than leave it below the fold (an
 * empty question's message was 1,400 px down, and nothing seemed to happen). */
function intoView(el) {
  if (el.getBoundingClientRect().top > window.innerHeight * 0.8) el.scrollIntoView({ block: 'start' });
}

function showError(err) {
  const box = $('#error');
  box.replaceChildren(errorBox(err));
  box.hidden = false;
  intoView(box);
  announce(`${errorTitle(err)}。`); // not the previous search's line, left for a screen reader to read
}

function announce(message) {
  $('#announce').replaceChildren(message);
}

function startProgress(corpusCount) {
  const started = performance.now();
  const label = corpusCount ? `正在检索 ${corpusCount} 个语料库…` : '正在检索全部语料库…';
  const tick = () => {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    $('#progress-elapsed').replaceChildren(`已用 ${seconds} 秒`);
  };
  $('#progress-text').replaceChildren(label);
  announce(label);
  tick();
  const timer = window.setInterval(tick, 200);
  $('#progress').hidden = false;
  $('#cancel-button').hidden = false;
  $('#results').setAttribute('aria-busy', 'true');
  return () => {
    window.clearInterval(timer);
    $('#progress').hidden = true;
    $('#cancel-button').hidden = true;
    $('#results').removeAttribute('aria-busy');
  };
}

async function search(event) {
  event.preventDefault();
  if (state.controller) return;
  const question = $('#question').value.trim();
  clearResults();
  if (!question) {
    showError(notice('请输入问题', '问题不能为空。'));
    $('#question').focus({ preventScroll: true }); // the message stays on the screen (showError brought it up)
    return;
  }
  if (!/[\p{L}\p{N}]/u.test(question)) {
    // ？？？ asks nothing: the server refuses it as invalid; say what to do in the page's words
    showError(notice('请输入问题', '问题里没有文字。请用中文写出要问的事，例如：临时检修停电要提前多久通知？'));
    $('#question').focus({ preventScroll: true });
    return;
  }
  if (question.length > MAX_QUESTION_CHARS) {
    // the server would refuse it with its own (English) message: say it here, in the page's words
    showError(notice('问题过长', `问题共 ${question.length} 字，超过 ${MAX_QUESTION_CHARS} 字的上限。请只写要问的事，条文原文不必粘贴。`));
    $('#question').focus();
    return;
  }
  const body = { question, filters: readFilters() };
  // the choice is made: fold the list (its summary names the provinces chosen) so the answer is not pushed down
  $('#province-picker').open = false;
  if (Array.isArray(state.corpora)) body.corpora = selectedCorpora();
  writeUrl(body);

  state.controller = new AbortController();
  updateSearchState();
  const stop = startProgress(body.corpora ? body.corpora.length : 0);
  try {
    const data = await api('/query', { method: 'POST', body, signal: state.controller.signal });
    renderResults(data);
    intoView($('#answer'));
    announce(data.abstained ? `检索完成：${data.title || '未找到相关规定'}。` : `检索完成：${(data.bullets || []).length} 条引文。`);
  } catch (err) {
    if (err.name === 'AbortError') {
      showError(notice('已取消', '检索已取消，未显示任何结果。'));
      announce('检索已取消。');
    } else {
      showError(err);
      announce('');
      // A 503 names each corpus that failed: show them, the user can drop the broken one and retry.
      if (err instanceof ApiError && Array.isArray(err.details.corpus_stats)) renderCorpusStatus(err.details.corpus_stats);
    }
  } finally {
    stop();
    state.controller = null;
    updateSearchState();
  }
}

// --- results ------------------------------------------------------------------------------------------------

function articleLabel(article, kind, part, parts) {
  const base = article || (kind === 'appendix' ? '附件' : '正文段落');
  return parts > 1 ? `${base}（第 ${part + 1}/${parts} 部分）` : base;
}

function corpusBadges(corpora) {
  return (corpora || []).map((name) => h('span', { class: 'badge corpus-badge', title: `语料库：${name}` }, name));
}

/** The citation's version status; compose marks it on `citations`, so look there first (by doc_id). */
function versionOf(citation, citations) {
  const listed = (citations || []).find((c) => c.doc_id === citation.doc_id && c.version_status);
  return listed && listed.version_status !== 'in_force' ? listed : citation;
}

const VERSION_STATUS = {
  upcoming: '新版本已公布、尚未施行',
  superseded_since: '当时有效，此后已被新版本取代',
  superseded: '已被新版本取代',
  not_yet_in_force: '尚未施行',
};

/** The cited version's status on the day asked, with a link to the other version (newer, or older). */
function versionBadge(citation, article) {
  const status = citation.version_status;
  if (!VERSION_STATUS[status]) return null;
  const next = citation.successor;
  const other = citation.counterpart;
  let text = VERSION_STATUS[status];
  if (next && status !== 'not_yet_in_force') {
    text += `：新版本${next.promulgated && next.promulgated !== next.effective_date ? `${next.promulgated} 公布，` : ''}`
      + `${next.effective_date || '日期不详'} 起施行`;
  }
  const target = other && other.doc_id ? other : next;
  return h('span', { class: `badge version-badge version-${status}` },
    text,
    target && target.doc_id
      ? h('button', {
        type: 'button',
        class: 'link-button',
        onclick: (e) => openArticle(
          { doc_id: target.doc_id, article: (other && other.article) || article, otherVersion: true }, e.currentTarget),
      }, status === 'not_yet_in_force' ? '查看当时有效的版本' : '查看新版本')
      : null);
}

/** The corresponding article of the other version, under a quote from a version not in force on the day asked. */
function counterpartNote(citation) {
  const other = citation.counterpart;
  if (!other || !citation.version_status || citation.version_status === 'in_force') return null;
  const which = citation.version_status === 'not_yet_in_force' ? '当时有效的版本' : '新版本';
  if (!other.article) return h('p', { class: 'counterpart' }, `${which}：${other.note || ''}。`);
  return h('details', { class: 'counterpart' },
    h('summary', null, `${which}对应条文：${other.article}`),
    h('p', { class: 'counterpart-text' }, other.text || ''));
}

/** Which day the answer is about, when it is not simply today. */
function temporalNote(temporal) {
  if (!temporal || !temporal.as_of || temporal.source === 'today') return null;
  const why = temporal.source === 'filter' ? '筛选条件' : `问题中的“${temporal.text || ''}”`;
  const future = temporal.after_today ? '；尚未到来，引文为现有文本届时的状态' : '';
  return h('span', { class: 'temporal-note' }, `时点：${temporal.as_of}（依据${why}${future}）`);
}

function filterSummary(filters) {
  const parts = [];
  for (const key of Object.keys(VOCAB)) {
    for (const code of filters[key] || []) parts.push(VOCAB[key][code] || code);
  }
  if (filters.as_of) parts.push(`时点 ${filters.as_of}`);
  if (filters.date_from || filters.date_to) parts.push(`生效日期 ${filters.date_from || '…'} 至 ${filters.date_to || '…'}`);
  if (filters.include_superseded) parts.push('含已失效版本');
  return parts.length ? parts.join(' · ') : '无';
}

// The places the question names: their rules and national ones were ranked before other provinces' rules.
function scopeNote(scope) {
  if (!scope || !Array.isArray(scope.names) || !scope.names.length) return null;
  return h('span', { class: 'scope-note' }, `地域：${scope.names.join('、')}（全国性规定和当地规定优先）`);
}

function renderResults(data) {
  const stats = Array.isArray(data.corpus_stats) ? data.corpus_stats : [];
  renderAnswer(data, stats);
  renderSearchMeta(data);
  renderCorpusStatus(stats);
  renderEvidence(data.candidates || [], data.abstained);
  $('#details').hidden = false;
  // Other scripts of the page (check.js, watch.js …) add their controls to what was just drawn.
  document.dispatchEvent(new CustomEvent('regrag:answer', { detail: { data, box: $('#answer') } }));
}

/** How the answer was found: the ordering used, the time taken, quotes that failed the verbatim check. */
function renderSearchMeta(data) {
  fill($('#search-meta'),
    h('span', { class: data.rerank_status === 'ok' || data.rerank_status === 'skipped' ? '' : 'warn' },
      `排序：${RERANK_STATUS[data.rerank_status] || `重新排序未完成（${data.rerank_status}），按检索得分排列`}`),
    data.timings_ms && data.timings_ms.total !== undefined ? h('span', null, `用时 ${Math.round(data.timings_ms.total)} 毫秒`) : null,
    data.confidence && data.confidence.level ? h('span', null, `置信度：${CONFIDENCE[data.confidence.level] || data.confidence.level}`) : null);
}

const CONFIDENCE = { high: '高', medium: '中', low: '低' };

function renderAnswer(data, stats) {
  const box = $('#answer');
  const incomplete = stats.filter((s) => s.status !== 'ok');
  const warning = incomplete.length
    ? h('p', { class: 'incomplete', role: 'note' },
      `注意：${incomplete.map((s) => `${s.corpus}（${CORPUS_STATUS[s.status] || s.status}）`).join('、')} `
        + '未返回结果，以下答案不包含这些语料库的条文。')
    : null;
  const meta = h('p', { class: 'answer-meta' },
    h('span', null, `筛选：${filterSummary(data.filters || {})}`),
    temporalNote(data.temporal),
    scopeNote(data.scope),
    data.dropped_spans ? h('span', { class: 'warn' }, `${data.dropped_spans} 段摘录未通过原文核对，已删除`) : null);

  if (data.abstained) {
    // answer_zh is the whole message; its first line is the heading (未找到相关规定（scope）).
    const [heading, ...rest] = (data.answer_zh || data.title || '未找到相关规定').split('\n');
    fill(box,
      h('div', { class: 'abstain' },
        h('h3', null, heading),
        h('p', { class: 'answer-text' }, rest.join('\n')),
        h('p', { class: 'abstain-note' }, '本次没有引用任何条文。')),
      warning,
      meta);
    box.hidden = false;
    return;
  }

  const bullets = (data.bullets || []).map((bullet) => {
    const cite = bullet.citation || {};
    const version = versionOf(cite, data.citations);
    return h('li', { class: 'bullet', dataset: { chunkId: bullet.chunk_id || '' } },
      // a line per paragraph the quote shows (a 款, a lead-in, an item), as the statute lays them out
      h('blockquote', { class: 'quote' },
        (bullet.lines && bullet.lines.length ? bullet.lines : [bullet.span])
          .map((line) => h('span', { class: 'quote-line' }, line))),
      h('div', { class: 'cite-row' },
        h('button', {
          type: 'button',
          class: 'cite',
          title: '在原文中查看该条',
          'aria-label': `查看原文：${cite.marker || ''} ${cite.article || ''}`,
          onclick: (e) => openArticle(
            { doc_id: cite.doc_id, article: cite.article, chunk_id: bullet.chunk_id, pieces: bullet.pieces || [bullet.span] },
            e.currentTarget),
        }, cite.marker || `《${cite.title}》`),
        h('span', { class: 'badge article-badge' }, cite.provision || cite.article || '正文'),
        corpusBadges(cite.corpora),
        versionBadge(version, cite.article),
        pageBadge(cite),
        h('button', {
          type: 'button',
          class: 'link-button copy',
          onclick: (e) => copyText(`${bullet.span}${cite.marker || ''}${pageLabel(cite.pages)}`, e.currentTarget),
        }, '复制引文')),
      ocrNote(cite),
      counterpartNote(cite));
  });
  // OCR notes stand under the quotes they concern; the rest (versions, cautions, the day asked) under the list
  const ocrNotes = new Set((data.bullets || []).map((b) => (b.citation || {}).note).filter(Boolean));
  const otherNotes = (data.notes || []).filter((note) => !ocrNotes.has(note));
  const notes = otherNotes.length
    ? h('div', { class: 'notes', role: 'note' },
      h('h4', null, '提示'),
      h('ul', null, otherNotes.map((note) => h('li', null, note))))
    : null;
  // Low confidence is read before the quotes, not found in the details: they may not answer the question.
  const caution = data.caution ? h('p', { class: 'caution', role: 'alert' }, data.caution) : null;
  fill(box,
    h('h3', { class: 'answer-title' }, data.title || '检索结果'),
    warning,
    caution,
    h('p', { class: 'answer-lead' }, '相关规定（逐字摘录原文）：'),
    h('ol', { class: 'bullets' }, bullets),
    notes,
    meta);
  box.hidden = false;
}

/** （第3页） / （第3–4页） for a quote with pages, '' without (the same label as the answer text). */
function pageLabel(pages) {
  if (!pages || !pages.length) return '';
  const first = Math.min(...pages);
  const last = Math.max(...pages);
  return first === last ? `（第${first}页）` : `（第${first}–${last}页）`;
}

/** The page of a PDF or scan the quote is on: a link that opens the PDF at that page (#page=N) when there is one. */
function pageBadge(cite) {
  const label = pageLabel(cite.pages).replace(/[（）]/g, '');
  if (!label) return null;
  const cls = `badge page-badge${cite.low_confidence ? ' low-confidence' : ''}`;
  const url = cite.url && /^https?:\/\//i.test(cite.url) && /#page=\d+$/.test(cite.url) ? cite.url : null;
  return url
    ? h('a', { class: cls, href: url, target: '_blank', rel: 'noopener noreferrer', title: '打开原件的这一页' }, label)
    : h('span', { class: cls }, label);
}

/** The warning under a quote from a page OCR read with low confidence. */
function ocrNote(cite) {
  if (!cite.low_confidence) return null;
  return h('p', { class: 'ocr-note', role: 'note' }, `⚠ ${cite.note || '引文出自识别置信度较低的扫描页，请核对原件。'}`);
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.replaceChildren('已复制');
  } catch {
    button.replaceChildren('复制失败');
  }
  window.setTimeout(() => button.replaceChildren('复制引文'), 2000);
}

function renderCorpusStatus(stats) {
  const box = $('#corpus-status');
  if (!stats.length) return;
  const cards = stats.map((s) => h('li', { class: `card status-${s.status}`, dataset: { corpus: s.corpus, status: s.status } },
    h('p', { class: 'card-head' },
      h('span', { class: 'corpus-name' }, s.corpus),
      h('span', { class: 'status-label' }, CORPUS_STATUS[s.status] || s.status),
      h('span', { class: 'status-code' }, s.status)),
    h('dl', null,
      h('dt', null, '命中'), h('dd', { class: 'hits' }, `${s.hits ?? 0} 条`),
      h('dt', null, '用时'), h('dd', { class: 'latency' }, `${Math.round(s.latency_ms ?? 0)} 毫秒`)),
    s.status === 'timeout' ? h('p', { class: 'card-note' }, '未在时限内返回，结果不含该语料库的条文。') : null,
    s.error ? h('p', { class: 'card-error' }, s.error) : null));
  box.replaceChildren(h('h3', null, '各语料库状态'), h('ul', { class: 'cards' }, cards));
  box.hidden = false;
}

function renderEvidence(candidates, abstained) {
  const box = $('#evidence');
  if (!candidates.length) {
    box.replaceChildren(h('h3', null, '检索到的条文'), h('p', { class: 'empty' }, '没有检索到符合条件的条文。'));
    box.hidden = false;
    return;
  }
  const items = candidates.map((c) => {
    const m = c.metadata || {};
    const ranks = [
      m.dense_rank ? `语义 #${m.dense_rank}` : null,
      m.lexical_rank ? `关键词 #${m.lexical_rank}` : null,
      m.rerank_score !== null && m.rerank_score !== undefined ? `重排 ${m.rerank_score}` : null,
    ].filter(Boolean);
    return h('li', { class: 'evidence-item', dataset: { chunkId: c.id, docId: c.doc_id } },
      h('div', { class: 'ev-head' },
        h('span', { class: 'ev-title' }, `《${c.title}》`),
        h('span', { class: 'badge article-badge' }, articleLabel(c.article, m.kind, m.part || 0, m.parts || 1)),
        corpusBadges(c.corpora && c.corpora.length ? c.corpora : [c.corpus]),
        m.superseded_by ? h('span', { class: 'badge version-badge version-superseded' }, '已有新版本') : null),
      m.heading_path && m.heading_path.length ? h('p', { class: 'ev-path' }, m.heading_path.join(' › ')) : null,
      // Blank lines between paragraphs are collapsed for reading; the words stay verbatim.
      h('p', { class: 'ev-text' }, (c.text || '').replace(/\n\s*\n/g, '\n')),
      h('p', { class: 'ev-meta' },
        h('span', null, `生效：${m.effective_date || '日期不详'}${m.effective_to ? `，失效：${m.effective_to}` : ''}`),
        h('span', null, `得分 ${Number(c.score).toFixed(4)}${ranks.length ? `（${ranks.join('，')}）` : ''}`),
        h('button', {
          type: 'button',
          class: 'link-button',
          onclick: (e) => openArticle({ doc_id: c.doc_id, article: c.article, chunk_id: c.id }, e.currentTarget),
        }, '在原文中查看')));
  });
  const heading = `检索到的条文（${candidates.length}）`;
  const list = h('ol', { class: 'evidence-list' }, items);
  // After an abstention the evidence is below the relevance floor: kept for inspection, folded away.
  box.replaceChildren(abstained
    ? h('details', null, h('summary', null, `${heading}：相关性不足，未引用`), list)
    : h('div', null, h('h3', null, heading), list));
  box.hidden = false;
}

// --- the article in its document ----------------------------------------------------------------------------

const HEADING_RE = /^(#{1,6})\s+(.*)$/;
const COMMENT_RE = /^<!--.*-->$/;
/**
 * One line of an article as nodes: the quoted span in <mark>, cross-references as links. `references` are the
 * ones GET /documents/{id} found in this article ({start, end, target} in document offsets): the server reads
 * them once, with the same rules everywhere, so the page never parses law text itself.
 */
function decorateLine(line, lineStart, marks, references) {
  const toLine = (s, e) => [Math.max(s - lineStart, 0), Math.min(e - lineStart, line.length)];
  const local = marks.map(([s, e]) => toLine(s, e)).filter(([s, e]) => s < e);
  const refs = references
    .map((r) => { const [start, end] = toLine(r.start, r.end); return { start, end, target: r.target }; })
    .filter((r) => r.start < r.end);
  const cuts = new Set([0, line.length]);
  for (const [s, e] of local) cuts.add(s).add(e);
  for (const r of refs) cuts.add(r.start).add(r.end);
  const points = [...cuts].sort((a, b) => a - b);
  const nodes = [];
  for (let k = 0; k + 1 < points.length; k += 1) {
    const [a, b] = [points[k], points[k + 1]];
    let node = document.createTextNode(line.slice(a, b));
    const ref = refs.find((r) => r.start <= a && b <= r.end);
    if (ref) {
      node = h('a', {
        class: 'xref',
        href: `#art-${ref.target}`,
        title: '跳转到本文件中的该条',
        onclick: (e) => { e.preventDefault(); jumpTo(ref.target); },
      }, node);
    }
    if (local.some(([s, e]) => s <= a && b <= e)) node = h('mark', null, node);
    nodes.push(node);
  }
  return nodes;
}

/** Scrolls the article panel (not the page: the answer stays where the reader left it) to `el`. */
function showInPanel(el) {
  const panel = $('#article-panel');
  const header = panel.querySelector('.panel-top').offsetHeight + 8; // sticky: keep `el` out from under it
  if (panel.scrollHeight > panel.clientHeight) {
    const top = el.getBoundingClientRect().top - panel.getBoundingClientRect().top + panel.scrollTop;
    panel.scrollTo({ top: top - header });
  } else {
    // Narrow screens: the panel is part of the page, which scrolls instead.
    window.scrollTo({ top: el.getBoundingClientRect().top + window.scrollY - header });
  }
  el.focus({ preventScroll: true });
}

function jumpTo(anchorId) {
  const target = document.getElementById(`art-${anchorId}`);
  if (!target) return;
  for (const el of document.querySelectorAll('.doc-article.flash')) el.classList.remove('flash');
  target.classList.add('flash');
  showInPanel(target);
}

/** Text between articles (title, dates, chapter headings) as headings and paragraphs. */
function contextNodes(text) {
  const nodes = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || COMMENT_RE.test(line)) continue;
    const heading = HEADING_RE.exec(line);
    if (heading) nodes.push(h(`h${Math.min(heading[1].length + 2, 6)}`, { class: 'doc-heading' }, heading[2]));
    else nodes.push(h('p', { class: 'doc-context' }, line));
  }
  return nodes;
}

function articleSection(anchor, text, start, cited, flag, marks) {
  const section = h('section', {
    class: `doc-article${cited ? ' cited' : ''}`,
    id: `art-${anchor.id}`,
    tabindex: '-1',
    dataset: { article: anchor.article || '', chunkId: anchor.id },
    'aria-label': articleLabel(anchor.article, anchor.kind, anchor.part, anchor.parts),
  });
  if (cited) section.append(h('p', { class: 'cited-flag' }, flag));
  const pages = pageLabel(anchor.pages);
  if (pages) section.append(h('p', { class: 'page-flag' }, pages.replace(/[（）]/g, '')));
  let offset = start;
  for (const line of text.split('\n')) {
    if (line.trim()) section.append(h('p', null, decorateLine(line, offset, marks, anchor.references || [])));
    offset += line.length + 1;
  }
  return section;
}

/** The day the badges are seen from: the as-of date chosen in the filters, else today. */
function asOfDay() {
  const chosen = $('#f-as-of') && $('#f-as-of').value;
  return chosen || new Date().toISOString().slice(0, 10);
}

/** 尚未施行 / 已被取代 / 现行, seen from the as-of day. */
function statusBadge(meta) {
  const day = asOfDay();
  if (meta.effective_date && meta.effective_date > day) {
    return h('span', { class: 'badge version-badge version-not_yet_in_force' }, `尚未施行（${day}）`);
  }
  if (meta.effective_to && meta.effective_to <= day) {
    return h('span', { class: 'badge version-badge version-superseded' }, `已被取代（${day}）`);
  }
  return h('span', { class: 'badge version-badge version-in_force' }, `现行有效（${day}）`);
}

const DATE_SOURCES = { text: '依据正文施行条款', sidecar: '依据元数据', 'object-metadata': '依据元数据', inferred: '依据标题下的日期' };

/** Rows for a PDF or scan: its pages, which OCR read (and with what), and those read with low confidence. */
function pageRows(pages) {
  if (!pages || !pages.count) return [];
  const rows = [['页数', `${pages.count} 页`]];
  if (pages.ocr_pages && pages.ocr_pages.length) {
    const conf = pages.confidence || {};
    const list = pages.ocr_pages.map((n) => (conf[n] !== undefined ? `第${n}页（${Number(conf[n]).toFixed(2)}）` : `第${n}页`));
    rows.push(['文字识别', `${list.join('、')}由扫描件识别${pages.ocr_engine ? `（${pages.ocr_engine}）` : ''}`]);
  }
  if (pages.low_confidence_pages && pages.low_confidence_pages.length) {
    rows.push(['识别置信度低', h('span', { class: 'ocr-note' },
      `⚠ 第${pages.low_confidence_pages.join('、')}页：识别文字可能有误，请核对原件`)]);
  }
  return rows;
}

/** A value with the server's note on it (GET /documents/{id} `notes`: a date or a place the text does not settle). */
function withNote(value, note) {
  return note ? [value, h('p', { class: 'meta-note' }, `⚠ ${note}`)] : value;
}

function describeMeta(meta, docId, provenance, pages, notes) {
  const from = (field) => (provenance && DATE_SOURCES[provenance[field]]) || '';
  const note = (field) => (notes && notes[field]) || null;
  const rows = [
    ['效力状态', statusBadge(meta)],
    meta.promulgated ? ['公布日期', `${meta.promulgated}${from('promulgated') ? `（${from('promulgated')}）` : ''}`] : null,
    // a noted date is not what the clause says (it is an amendment's adoption): the note says where it is from
    ['施行日期', withNote(`${meta.effective_date || '日期不详'}${from('effective_date') && !note('effective_date')
      ? `（${from('effective_date')}）` : ''}`, note('effective_date'))],
    meta.effective_clause ? ['施行条款', meta.effective_clause] : null,
    ...(meta.exceptions || []).map((e) => ['另行施行', `${e.scope}：${e.date}`]),
    meta.effective_to ? ['失效日期', withNote(meta.effective_to, note('effective_to'))] : null,
    ['地区', withNote(VOCAB.province[meta.province] || (meta.province === 'unknown' ? '未能确定' : meta.province),
      note('province'))],
    // no article says when the text takes effect: it may be cut short, and a quote's neighbours may be missing
    note('text') ? ['文本完整性', withNote('可能不完整', note('text'))] : null,
    ['效力级别', VOCAB.regulation_level[meta.regulation_level] || meta.regulation_level],
    ['文件类别', VOCAB.doc_class[meta.doc_class] || meta.doc_class],
    ['语料库', meta.corpus],
    ['文件编号', docId],
    ...pageRows(pages),
  ].filter(Boolean);
  const url = meta.source_url && /^https?:\/\//i.test(meta.source_url) ? meta.source_url : null;
  if (url) rows.push(['来源', h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, url)]);
  return h('dl', { class: 'doc-meta' }, rows.map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

/** Parent law, implementing rules and repealed texts, each a link when the index holds it. */
function linkList(links, article) {
  if (!links) return null;
  const item = (label, ref) => h('li', null, `${label}：《${ref.title}》`,
    ref.doc_id
      ? h('button', {
        type: 'button',
        class: 'link-button',
        onclick: (e) => openArticle({ doc_id: ref.doc_id }, e.currentTarget),
      }, '查看')
      : h('span', { class: 'muted' }, '（未收录）'));
  const items = [
    ...(links.implements || []).map((r) => item('上位法', r)),
    ...(links.implemented_by || []).map((r) => item('配套规定', r)),
    ...(links.repeals || []).map((r) => item('同时废止', r)),
  ];
  return items.length ? h('div', { class: 'links' }, h('h3', null, '相关文件'), h('ul', null, items)) : null;
}

const CHANGE_LABELS = { changed: '修改', renumbered: '条号变动', added: '新增', removed: '删除' };

function versionList(versions, docId, article) {
  const chain = versions && versions.versions;
  if (!chain || chain.length < 2) return null;
  const dates = (v) => `${v.promulgated && v.promulgated !== v.effective_from ? `${v.promulgated} 公布，` : ''}`
    + `${v.effective_from || '日期不详'} 起施行${v.effective_to ? `，${v.effective_to} 止` : ''}`;
  const changes = (versions.changes || []).map((c) => h('details', { class: 'changes' },
    h('summary', null, `修订对照（${c.from} → ${c.to}）：`
      + Object.entries(c.summary).filter(([k, n]) => k !== 'unchanged' && n).map(([k, n]) => `${CHANGE_LABELS[k]} ${n} 条`).join('，')
      + `，未变 ${c.summary.unchanged || 0} 条`),
    h('ol', null, c.articles.map((a) => h('li', { class: `change change-${a.change}` },
      h('p', { class: 'change-head' }, `${CHANGE_LABELS[a.change]}：${a.old ? a.old.article : '—'} → ${a.new ? a.new.article : '—'}`),
      a.old ? h('p', { class: 'change-old' }, a.old.text) : null,
      a.new ? h('p', { class: 'change-new' }, a.new.text) : null)))));
  return h('div', { class: 'versions' },
    h('h3', null, '版本沿革'),
    h('ol', null, chain.map((v) => h('li', { class: v.doc_id === docId ? 'current' : '' },
      `《${v.title}》 ${dates(v)}${v.effective_to ? '' : '，现行'}`,
      v.doc_id === docId
        ? h('span', { class: 'badge' }, '当前查看')
        : h('button', {
          type: 'button',
          class: 'link-button',
          onclick: (e) => openArticle({ doc_id: v.doc_id, article, otherVersion: true }, e.currentTarget),
        }, '查看此版本')))),
    changes);
}

function renderArticle(doc, versions, want) {
  const meta = doc.metadata || {};
  const text = doc.text || '';
  const anchors = [...(doc.anchors || [])].sort((a, b) => a.start - b.start);
  const isCited = (a) => (want.article ? a.article === want.article : a.id === want.chunk_id);
  const citedAnchors = anchors.filter(isCited);
  // The quote's pieces (each a verbatim slice of the stored text), found in order from the cited article on.
  const marks = [];
  const home = anchors.find((a) => a.id === want.chunk_id) || citedAnchors[0];
  if (want.pieces && home) {
    const article = citedAnchors.length ? citedAnchors[0].start : home.start;
    let from = Math.min(article, home.start);
    for (const piece of want.pieces) {
      const at = text.indexOf(piece, from);
      if (at < 0) break;
      marks.push([at, at + piece.length]);
      from = at + piece.length;
    }
  }

  // In another version the same article number may hold different text: say so instead of "cited".
  const flag = want.otherVersion ? '同一条号（不同版本的条文内容可能不同）' : '引用条款';
  const body = h('div', { class: 'doc-text' });
  let pos = 0;
  for (const a of anchors) {
    const start = Math.max(a.start, pos);
    if (a.end <= start) continue;
    if (start > pos) body.append(...contextNodes(text.slice(pos, start)));
    body.append(articleSection(a, text.slice(start, a.end), start, isCited(a), flag, marks));
    pos = a.end;
  }
  if (pos < text.length) body.append(...contextNodes(text.slice(pos)));

  const first = citedAnchors[0];
  const path = first
    ? h('nav', { class: 'breadcrumb', 'aria-label': '条文位置' },
      h('ol', null,
        [`《${meta.title}》`, ...(first.heading_path || []), articleLabel(first.article, first.kind, first.part, first.parts)]
          .map((step) => h('li', null, step))),
      h('button', { type: 'button', class: 'link-button', onclick: () => jumpTo(first.id) }, `定位到${first.article || '该条'}`))
    : h('p', { class: 'warn' }, want.article ? `本文件中未找到“${want.article}”，以下为全文。` : '以下为全文。');

  $('#article-title').replaceChildren(`《${meta.title || doc.doc_id}》`);
  fill($('#article-path'), path);
  fill($('#article-body'), describeMeta(meta, doc.doc_id, doc.provenance, doc.pages, doc.notes),
    linkList(doc.links, want.article), versionList(versions, doc.doc_id, want.article), body);
  $('#article-body').removeAttribute('aria-busy');
  document.dispatchEvent(new CustomEvent('regrag:document', { detail: { doc, versions, want, box: $('#article-body') } }));
  if (first) showInPanel(document.getElementById(`art-${first.id}`));
  else if (window.matchMedia(STACKED).matches) $('#article-panel').scrollIntoView({ block: 'start' });
  else $('#article-panel').scrollTo({ top: 0 });
}

function loadDocument(docId) {
  if (!state.documents.has(docId)) {
    const promise = api(`/documents/${encodeURIComponent(docId)}`);
    promise.catch(() => state.documents.delete(docId)); // do not cache failures
    state.documents.set(docId, promise);
  }
  return state.documents.get(docId);
}

async function openArticle(want, trigger) {
  const token = ++state.articleToken;
  state.lastTrigger = trigger || null;
  // Opening the panel narrows the answer column and its quotes reflow: scroll by as much as the clicked
  // citation moved, so the reader keeps their place in the answer.
  const before = trigger ? trigger.getBoundingClientRect().top : null;
  $('#article-panel').hidden = false;
  document.querySelector('.layout').classList.add('with-article');
  if (window.matchMedia(STACKED).matches) {
    // one column (a phone): the panel opens below everything else, out of sight; go to it
    $('#article-panel').scrollIntoView({ block: 'start' });
  } else if (before !== null) window.scrollBy(0, trigger.getBoundingClientRect().top - before);
  $('#article-title').replaceChildren('条文原文');
  $('#article-path').replaceChildren();
  $('#article-body').replaceChildren(h('p', { class: 'loading' }, '正在加载原文…'));
  $('#article-body').setAttribute('aria-busy', 'true');
  try {
    const versions = api(`/documents/${encodeURIComponent(want.doc_id)}/versions`)
      .catch(() => null); // the history is a nicety: the article shows without it
    const [doc, chain] = await Promise.all([loadDocument(want.doc_id), versions]);
    if (token !== state.articleToken) return;
    renderArticle(doc, chain, want);
  } catch (err) {
    if (token !== state.articleToken) return;
    $('#article-body').replaceChildren(errorBox(err));
    $('#article-body').removeAttribute('aria-busy');
  }
}

function closeArticle() {
  state.articleToken += 1;
  $('#article-panel').hidden = true;
  document.querySelector('.layout').classList.remove('with-article');
  if (state.lastTrigger && state.lastTrigger.isConnected) state.lastTrigger.focus();
}

// --- start ----------------------------------------------------------------------------------------------------

function init() {
  try {
    state.api = apiBase();
  } catch (err) {
    showError(err);
    state.corpora = null;
    updateSearchState();
    $('#search-button').disabled = true;
    return;
  }
  if (state.api && new URL(state.api).origin !== window.location.origin) {
    const note = $('#api-origin');
    note.replaceChildren(`数据来源：${state.api}`);
    note.hidden = false;
  }
  fillFilterSelects();
  $('#search-form').addEventListener('submit', search);
  $('#cancel-button').addEventListener('click', () => state.controller && state.controller.abort());
  $('#question').addEventListener('input', updateCounter);
  $('#question').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) $('#search-form').requestSubmit();
  });
  $('#corpus-all').addEventListener('change', (e) => {
    for (const box of corpusBoxes()) box.checked = e.currentTarget.checked;
    updateSearchState();
  });
  $('#article-close').addEventListener('click', closeArticle);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !$('#article-panel').hidden) closeArticle();
  });
  updateCounter();
  state.askOnLoad = readUrl();
  updateSearchState();
  loadCorpora();
  loadLibrary();
  $('#library').addEventListener('toggle', renderLibrary);
}

init();
