// 引用核验: the citation check tab. Self-contained (inside one function scope) so that the search page's script
// can change without touching it; it shares only dom.js (building elements, where the API lives).
// Every string from the API or the document enters the page as a text node, never as HTML.
'use strict';

(() => {
  // the status codes of POST /check (regrag.check.findings.STATUSES) and what a reader sees for each
  const STATUS = {
    ok: { label: '正确', tone: 'ok' },
    article_missing: { label: '条文不存在', tone: 'bad' },
    quote_mismatch: { label: '引文与原文不符', tone: 'bad' },
    quote_elsewhere: { label: '引文出自他条', tone: 'bad' },
    superseded: { label: '所引版本已被取代', tone: 'bad' },
    not_yet_in_force: { label: '所引版本尚未施行', tone: 'bad' },
    unknown_law: { label: '本库未收录，无法核验', tone: 'unknown' },
    wrong_title: { label: '法规名称有误', tone: 'bad' },
    ambiguous: { label: '简称有歧义', tone: 'warn' },
  };
  const AS_OF_SOURCE = { request: '指定的核验日期', document: '文书落款日期', today: '今天（文书未写日期）' };

  const byId = (id) => document.getElementById(id);

  const el = h; // dom.js (so is apiBase)

  // --- tabs ----------------------------------------------------------------------------------------------

  function selectTab(tab) {
    const tabs = [...document.querySelectorAll('.tabs [role="tab"]')];
    for (const other of tabs) {
      const selected = other === tab;
      other.setAttribute('aria-selected', String(selected));
      other.tabIndex = selected ? 0 : -1;
      byId(other.getAttribute('aria-controls')).hidden = !selected;
    }
    if (tab.id === 'tab-check') window.history.replaceState(null, '', '#check');
    else if (window.location.hash === '#check') window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }

  function tabKeys(event) {
    const tabs = [...document.querySelectorAll('.tabs [role="tab"]')];
    const at = tabs.indexOf(event.currentTarget);
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    const tab = tabs[(next + tabs.length) % tabs.length];
    selectTab(tab);
    tab.focus();
  }

  // --- request ---------------------------------------------------------------------------------------------

  async function postCheck() {
    const file = byId('check-file').files[0];
    const text = byId('check-text').value;
    const asOf = byId('check-as-of').value;
    let init;
    if (file) {
      const form = new FormData();
      form.append('file', file, file.name);
      if (asOf) form.append('as_of', asOf);
      init = { method: 'POST', body: form };
    } else {
      if (!text.trim()) throw Object.assign(new Error('请粘贴文书全文，或选择一个文件。'), { title: '没有可核验的内容' });
      init = {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(asOf ? { text, as_of: asOf } : { text }),
      };
    }
    let response;
    try {
      response = await fetch(`${apiBase()}/check`, init);
    } catch (err) {
      throw Object.assign(new Error(`无法连接服务器（${err.message}）。`), { title: '网络错误' });
    }
    let data = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    if (!response.ok) {
      const error = (data && data.error) || {};
      const title = response.status === 413 ? '文件过大（HTTP 413）' : `核验失败（HTTP ${response.status}）`;
      throw Object.assign(new Error(error.message || response.statusText), { title, code: error.code });
    }
    if (!data || !Array.isArray(data.citations)) throw Object.assign(new Error('服务器返回的内容无法识别。'), { title: '核验失败' });
    return { data, text: file ? (data.document && data.document.text) || '' : text };
  }

  async function submit(event) {
    event.preventDefault();
    const button = byId('check-button');
    const progress = byId('check-progress');
    button.disabled = true;
    progress.textContent = '正在核验…';
    byId('check-error').hidden = true;
    try {
      const { data, text } = await postCheck();
      render(data, text);
      const s = data.summary;
      progress.textContent = `核验完成：引用 ${s.citations} 处，问题 ${s.problems} 处，${s.cautions ? `请核对 ${s.cautions} 处，` : ''}无法核验 ${s.unverifiable} 处。`;
    } catch (err) {
      const box = byId('check-error');
      box.replaceChildren(el('div', { class: 'error-box' },
        el('p', { class: 'error-title' }, err.title || '页面出错'),
        el('p', { class: 'error-message' }, err.message || String(err)),
        err.code ? el('p', { class: 'error-code' }, `错误代码：${err.code}`) : null));
      box.hidden = false;
      byId('check-results').hidden = false;
      byId('check-summary').replaceChildren();
      byId('check-list').replaceChildren();
      byId('check-document').hidden = true;
      progress.textContent = '核验未完成。';
    } finally {
      button.disabled = false;
    }
  }

  // --- results ---------------------------------------------------------------------------------------------

  function badge(status) {
    const s = STATUS[status] || { label: status, tone: 'warn' };
    return el('span', { class: `check-badge tone-${s.tone}`, dataset: { status } }, s.label, el('code', null, status));
  }

  function versionLine(v, prefix) {
    if (!v) return null;
    const dates = v.promulgated && v.promulgated !== v.effective_date
      ? `公布 ${v.promulgated}，施行 ${v.effective_date || '日期不详'}` : `施行 ${v.effective_date || '日期不详'}`;
    return el('p', { class: 'check-version' }, `${prefix}《${v.title}》（${dates}）`);
  }

  /** A character diff as the reader sees it: kept text plain, the document's characters struck, the law's inserted. */
  function diffView(ops, left, right, caption) {
    return el('p', { class: 'check-diff', 'aria-label': caption },
      el('span', { class: 'check-diff-caption' }, `${caption}：`),
      ops.map((op) => {
        if (op.op === 'equal') return op[right];
        return [
          op[left] ? el('del', { title: '文书所写' }, op[left]) : null,
          op[right] ? el('ins', { title: '法规原文' }, op[right]) : null,
        ];
      }));
  }

  function quoteView(q) {
    if (q.match === 'verbatim') {
      return el('li', { class: 'check-quote match-verbatim' }, el('span', { class: 'check-mark' }, '✓ 引文与原文一致：'),
        `“${q.text}”`, q.note ? el('span', { class: 'check-note' }, ` ${q.note}`) : null);
    }
    if (q.match === 'elsewhere') {
      return el('li', { class: 'check-quote match-elsewhere' },
        el('span', { class: 'check-mark' }, '✗ 引文见于他条：'), `“${q.text}”`,
        el('ul', null, q.found_in.map((f) => el('li', null, `《${f.title}》${f.article}`,
          el('blockquote', { class: 'check-law' }, f.article_text)))));
    }
    if (q.match === 'mismatch') {
      return el('li', { class: 'check-quote match-mismatch' },
        el('span', { class: 'check-mark' }, '✗ 引文与原文不符：'), `“${q.text}”`,
        el('p', { class: 'check-closest' }, '最接近的原文：', el('q', null, q.closest.text)),
        diffView(q.diff, 'quote', 'law', '差异（删除线为文书所写，下划线为原文）'));
    }
    return el('li', { class: 'check-quote match-other' }, `“${q.text}”`, q.note ? ` ${q.note}` : '');
  }

  function evidenceView(c) {
    const e = c.evidence || {};
    const parts = [];
    if (c.status === 'superseded') {
      parts.push(versionLine(e.version, '所引版本：'), versionLine(e.successor, '取代它的版本：'));
      if (e.counterpart) {
        parts.push(el('p', null, `新版本对应条文：${e.counterpart.article}`),
          el('blockquote', { class: 'check-law' }, e.counterpart.text));
        if (e.diff) parts.push(diffView(e.diff, 'old', 'new', '修订对照（删除线为旧文，下划线为新文）'));
      } else {
        parts.push(el('p', null, '新版本中没有对应条文。'));
      }
    }
    if (c.status === 'not_yet_in_force') {
      parts.push(versionLine(e.version, '所引版本：'));
      parts.push(e.in_force_then ? versionLine(e.in_force_then, '当日有效的版本：') : el('p', null, '当日尚无有效版本。'));
      if (e.counterpart) {
        parts.push(el('p', null, `当日有效版本的对应条文：${e.counterpart.article}`),
          el('blockquote', { class: 'check-law' }, e.counterpart.text));
      }
    }
    if (c.status === 'ambiguous' && Array.isArray(e.candidates)) {
      parts.push(el('ul', { class: 'check-candidates' }, e.candidates.map((d) => el('li', null, `《${d.title}》（${d.doc_id}）`))));
    }
    if ((c.status === 'wrong_title' || c.status === 'unknown_law') && e.suggestion) {
      parts.push(el('p', { class: 'check-suggestion' }, `相近的名称：《${e.suggestion}》`));
    }
    if (e.upcoming) parts.push(versionLine(e.upcoming, '已公布、尚未施行的新版本：'));
    if (e.article_text && c.status !== 'superseded') {
      parts.push(el('details', { class: 'check-article' },
        el('summary', null, `条文原文：《${c.title}》${c.article}`),
        el('blockquote', { class: 'check-law' }, e.article_text)));
    } else if (e.article_text) {
      parts.push(el('details', { class: 'check-article' },
        el('summary', null, `所引版本原文：${c.article}`), el('blockquote', { class: 'check-law' }, e.article_text)));
    }
    return parts;
  }

  // an ok citation the check still asks the reader to verify (a figure the article does not state, an article
  // number that names another rule since a revision): shown as a warning, and kept by the problems-only filter
  function toneOf(c) {
    return c.caution ? 'warn' : (STATUS[c.status] || { tone: 'warn' }).tone;
  }

  function card(c, index) {
    const tone = toneOf(c);
    return el('li', { class: `check-card tone-${tone}`, id: `check-${index}`, dataset: { status: c.status, caution: c.caution ? '1' : '' }, tabindex: '-1' },
      el('p', { class: 'check-card-head' }, badge(c.status),
        c.caution ? el('span', { class: 'check-caution' }, '请核对') : null,
        el('span', { class: 'check-ref' }, c.text),
        c.text.includes(c.article) ? null : el('span', { class: 'check-article-label' }, `→ ${c.article}`)),
      el('p', { class: 'check-message' }, c.message),
      c.quotes && c.quotes.length ? el('ul', { class: 'check-quotes' }, c.quotes.map(quoteView)) : null,
      evidenceView(c),
      c.also && c.also.length ? el('p', { class: 'check-also' }, `另：${c.also.map((s) => (STATUS[s] || {}).label || s).join('、')}`) : null);
  }

  /** The document with each reference marked (the worst status of its citations), each mark a link to its card. */
  function documentView(text, citations) {
    const spans = new Map();
    citations.forEach((c, i) => {
      const key = `${c.start}:${c.end}`;
      const seen = spans.get(key);
      const bad = c.status !== 'ok' || Boolean(c.caution);
      if (!seen) spans.set(key, { start: c.start, end: c.end, index: i, bad, tone: toneOf(c), status: c.status });
      else if (bad && !seen.bad) Object.assign(seen, { index: i, bad, tone: toneOf(c), status: c.status });
    });
    const ordered = [...spans.values()].sort((a, b) => a.start - b.start);
    const out = [];
    let at = 0;
    for (const s of ordered) {
      if (s.start < at || s.end > text.length) continue;
      out.push(text.slice(at, s.start));
      out.push(el('a', { href: `#check-${s.index}`, class: `check-span tone-${s.tone}`, dataset: { status: s.status },
        onclick: (e) => { e.preventDefault(); const target = byId(`check-${s.index}`); target.scrollIntoView({ block: 'center' }); target.focus(); },
      }, text.slice(s.start, s.end)));
      at = s.end;
    }
    out.push(text.slice(at));
    return out;
  }

  function render(data, text) {
    const s = data.summary;
    const counts = Object.entries(s.by_status || {}).map(([status, n]) => el('li', null, badge(status), ` ${n}`));
    byId('check-summary').replaceChildren(
      el('p', { class: 'check-date' }, `核验日期：${data.as_of}（${AS_OF_SOURCE[data.as_of_source] || data.as_of_source}`,
        data.as_of_source === 'document' && data.document_date ? `：“${data.document_date.text}”` : '', '）'),
      s.citations
        ? el('p', null, `共 ${s.citations} 处引用：正确 ${s.ok} 处`, s.cautions ? `（其中请核对 ${s.cautions} 处）` : '',
          `，有问题 ${s.problems} 处，无法核验 ${s.unverifiable} 处。`)
        : el('p', { class: 'check-none' }, '文书中没有找到法规条文的引用（形如《某某法》第X条）。'),
      counts.length ? el('ul', { class: 'check-counts' }, counts) : null);
    byId('check-list').replaceChildren(...data.citations.map(card));
    const doc = byId('check-document');
    doc.hidden = !text;
    byId('check-document-text').replaceChildren(...documentView(text || '', data.citations));
    applyFilter();
    byId('check-results').hidden = false;
  }

  function applyFilter() {
    const only = byId('check-problems-only').checked;
    for (const item of document.querySelectorAll('#check-list .check-card')) {
      item.hidden = only && item.dataset.status === 'ok' && !item.dataset.caution;
    }
  }

  function clear() {
    byId('check-text').value = '';
    byId('check-file').value = '';
    byId('check-as-of').value = '';
    byId('check-results').hidden = true;
    byId('check-progress').textContent = '';
  }

  function init() {
    if (!byId('check-view')) return;
    for (const tab of document.querySelectorAll('.tabs [role="tab"]')) {
      tab.addEventListener('click', () => selectTab(tab));
      tab.addEventListener('keydown', tabKeys);
    }
    byId('check-form').addEventListener('submit', submit);
    byId('check-clear').addEventListener('click', clear);
    byId('check-problems-only').addEventListener('change', applyFilter);
    const fromHash = () => {
      if (window.location.hash === '#check') selectTab(byId('tab-check'));
    };
    window.addEventListener('hashchange', fromHash);
    fromHash();
  }

  init();
})();
