// 关注与导出: the 关注 buttons on each quote and on the document view, the answer's and the versions' export
// buttons, the 关注与提醒 tab (watches and their alerts), and addresses that open a document (?doc=…&article=…).
// It adds controls to what app.js draws (the regrag:answer and regrag:document events) and never redraws them.
// Every string from the API enters the page as a text node or an attribute value, never as HTML.
'use strict';

(() => {
  const KIND = { document: '文件', article: '条文', question: '问题' };
  const ALERT_KIND = {
    new_version: '新版本',
    repealed: '废止或被取代',
    article_changed: '条文修改',
    article_removed: '条文删除',
    question_changed: '引用条文变化',
  };

  const byId = (id) => document.getElementById(id);
  const watched = new Map(); // "doc|article" (article '' for a whole document) → watch_id
  let watchesLoaded = null; // Promise of the first GET /watches

  const el = h; // dom.js (so are apiBase and api)

  /** The file behind an export address, saved under the name the server gives (RFC 6266 filename*). */
  async function download(path, button) {
    const label = button.textContent;
    button.disabled = true;
    button.textContent = '正在导出…';
    try {
      let response;
      try {
        response = await fetch(`${apiBase()}${path}`);
      } catch (err) {
        throw new Error(`无法连接服务器（${err.message}）`);
      }
      if (!response.ok) {
        let message = `HTTP ${response.status}`;
        try {
          message = (await response.json()).error.message || message;
        } catch {
          // not JSON: the status says enough
        }
        throw new Error(message);
      }
      const blob = await response.blob();
      const url = URL.createObjectURL(blob);
      const link = el('a', { href: url, download: fileName(response.headers.get('Content-Disposition')) || 'regrag-export' });
      document.body.append(link);
      link.click();
      link.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
      button.textContent = '已导出';
    } catch (err) {
      button.textContent = '导出失败';
      button.title = err.message;
      button.after(el('span', { class: 'watch-error', role: 'alert' }, err.message));
    } finally {
      button.disabled = false;
      window.setTimeout(() => { button.textContent = label; }, 2500);
    }
  }

  function fileName(disposition) {
    if (!disposition) return null;
    const extended = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
    if (extended) return decodeURIComponent(extended[1]);
    const plain = /filename="([^"]+)"/i.exec(disposition);
    return plain ? plain[1] : null;
  }

  // --- watches ----------------------------------------------------------------------------------------------

  const key = (docId, article) => `${docId}|${article || ''}`;

  function loadWatches() {
    watchesLoaded = api('/watches').then((data) => {
      watched.clear();
      for (const w of data.watches || []) {
        if (w.kind === 'question') continue;
        watched.set(key(w.doc_id, w.article), w.watch_id);
        if (w.following) watched.set(key(w.following.doc_id, w.following.article), w.watch_id);
      }
      return data.watches || [];
    }).catch(() => []); // without the list the buttons still work; they only cannot say "already watched"
    return watchesLoaded;
  }

  /** A 关注 button: POST /watches with `body`; says 已关注 once the server has the watch. */
  function watchButton(label, body, title) {
    const button = el('button', { type: 'button', class: 'link-button watch-button', title, 'aria-pressed': 'false' }, label);
    const done = (watchId) => {
      button.textContent = `已${label}`;
      button.setAttribute('aria-pressed', 'true');
      button.disabled = true;
      button.dataset.watchId = watchId;
    };
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        const made = await api('/watches', { method: 'POST', body });
        if (body.doc_id) watched.set(key(body.doc_id, made.watch.article), made.watch_id);
        done(made.watch_id);
        // a version already replaced is told at once: the alert the server recorded, beside the button
        const told = (made.alerts || []).map((a) => a.message).filter(Boolean);
        if (told.length) button.after(el('span', { class: 'watch-told', role: 'status' }, told.join(' ')));
        announce([made.created ? `已关注：${title}` : `此前已关注：${title}`, ...told].join(' '));
      } catch (err) {
        button.disabled = false;
        button.after(el('span', { class: 'watch-error', role: 'alert' }, `关注失败：${err.message}`));
      }
    });
    if (body.doc_id && watched.has(key(body.doc_id, body.article))) done(watched.get(key(body.doc_id, body.article)));
    return button;
  }

  function announce(text) {
    const live = byId('announce');
    if (live) live.textContent = text;
  }

  /** What the user asked with: the filters of the answer, without the default day (today), which a saved
   * question must not freeze. */
  function savedFilters(data) {
    const filters = { ...(data.filters || {}) };
    if (!data.temporal || data.temporal.source !== 'filter') delete filters.as_of;
    return filters;
  }

  async function onAnswer(event) {
    const { data, box } = event.detail || {};
    if (!data || !box) return;
    await (watchesLoaded || loadWatches());
    const bullets = data.bullets || [];
    for (const li of box.querySelectorAll('li.bullet')) {
      const bullet = bullets.find((b) => b.chunk_id === li.dataset.chunkId);
      const row = li.querySelector('.cite-row');
      if (!bullet || !row || row.querySelector('.watch-button')) continue;
      const cite = bullet.citation || {};
      row.append(watchButton('关注', { doc_id: cite.doc_id, article: cite.article }, `《${cite.title}》${cite.article || ''}`));
    }
    if (box.querySelector('.answer-tools') || !data.query_id) return;
    const tools = el('div', { class: 'answer-tools', role: 'group', 'aria-label': '导出与关注' },
      el('span', { class: 'tools-label' }, '导出答案：'),
      el('button', { type: 'button', class: 'export-button', dataset: { format: 'docx' },
        onclick: (e) => download(`/query/${data.query_id}/export?format=docx`, e.currentTarget) }, 'Word（.docx）'),
      el('button', { type: 'button', class: 'export-button', dataset: { format: 'md' },
        onclick: (e) => download(`/query/${data.query_id}/export?format=md`, e.currentTarget) }, 'Markdown'),
      questionOf()
        ? watchButton('关注此问题', { question: questionOf(), filters: savedFilters(data) }, '答案引用的条文变化时提醒')
        : null);
    box.append(tools);
  }

  /** The question as asked: the response does not repeat it; the page's address holds it (app.js writes ?q=
   * before it asks), else the form. */
  function questionOf() {
    const field = byId('question');
    return (new URLSearchParams(window.location.search).get('q') || (field && field.value) || '').trim();
  }

  async function onDocument(event) {
    const { doc, versions, want, box } = event.detail || {};
    if (!doc || !box || box.querySelector('.document-tools')) return;
    await (watchesLoaded || loadWatches());
    const title = (doc.metadata && doc.metadata.title) || doc.doc_id;
    const chain = (versions && versions.versions) || [];
    const tools = el('div', { class: 'document-tools', role: 'group', 'aria-label': '关注与导出' },
      watchButton('关注本文件', { doc_id: doc.doc_id }, `《${title}》有新版本或被废止时提醒`),
      want && want.article && (doc.anchors || []).some((a) => a.article === want.article)
        ? watchButton(`关注${want.article}`, { doc_id: doc.doc_id, article: want.article }, `《${title}》${want.article}修改时提醒`)
        : null,
      chain.length > 1 ? [
        el('span', { class: 'tools-label' }, '导出修订对照：'),
        el('button', { type: 'button', class: 'export-button', dataset: { format: 'docx' },
          onclick: (e) => download(`/documents/${encodeURIComponent(doc.doc_id)}/versions/export?format=docx`, e.currentTarget) }, 'Word'),
        el('button', { type: 'button', class: 'export-button', dataset: { format: 'md' },
          onclick: (e) => download(`/documents/${encodeURIComponent(doc.doc_id)}/versions/export?format=md`, e.currentTarget) }, 'Markdown'),
      ] : null);
    box.prepend(tools);
  }

  // --- the 关注与提醒 tab ---------------------------------------------------------------------------------

  function describe(w) {
    if (w.kind === 'question') {
      // the filters it is asked with (时点, 省份 …): two watches of one question on two days are two watches
      const filters = filterSummary(w.filters || {});
      return filters === '无' ? `“${w.question}”` : `“${w.question}”（${filters}）`;
    }
    const following = w.following || {};
    // where the watch follows now, in words a reader knows (a document id means nothing to them)
    const moved = following.doc_id && following.doc_id !== w.doc_id;
    const renumbered = following.article && following.article !== w.article;
    const now = moved ? `（现为新版本${following.article || ''}）` : renumbered ? `（现为${following.article}）` : '';
    return `《${w.title}》${w.article || ''}${now}`;
  }

  async function showWatches() {
    const list = byId('watch-list');
    const alertsBox = byId('alert-list');
    byId('watch-status').textContent = '正在加载…';
    try {
      const [watches, alerts] = await Promise.all([loadWatches(), api('/alerts?limit=200')]);
      list.replaceChildren(...watches.map((w) => el('li', { class: 'watch-item', dataset: { watchId: w.watch_id } },
        el('span', { class: 'badge' }, KIND[w.kind] || w.kind),
        el('span', { class: 'watch-what' }, describe(w)),
        w.owner ? el('span', { class: 'muted' }, w.owner) : null,
        el('span', { class: 'muted' }, `关注于 ${String(w.created).slice(0, 10)}`),
        el('button', { type: 'button', class: 'link-button', onclick: (e) => unwatch(w, e.currentTarget) }, '取消关注'))));
      if (!watches.length) list.replaceChildren(el('li', { class: 'muted' }, '还没有关注任何文件、条文或问题。在答案的引文旁或原文页上点“关注”。'));
      alertsBox.replaceChildren(...(alerts.alerts || []).map((a) => el('li', { class: `alert-item alert-${a.kind}`, dataset: { alertId: a.alert_id } },
        el('p', { class: 'alert-head' },
          el('span', { class: 'badge' }, ALERT_KIND[a.kind] || a.kind),
          el('time', { datetime: a.created }, String(a.created).replace('T', ' ').slice(0, 16))),
        el('p', { class: 'alert-message' }, a.message || ''),
        a.link ? el('a', { href: pageLink(a.link) }, a.kind === 'question_changed' ? '重新检索' : '查看原文') : null)));
      if (!(alerts.alerts || []).length) alertsBox.replaceChildren(el('li', { class: 'muted' }, '暂无提醒。'));
      byId('watch-status').textContent = `关注 ${watches.length} 项，提醒 ${(alerts.alerts || []).length} 条。`;
      byId('alert-feed').href = `${apiBase()}/alerts?format=atom`;
    } catch (err) {
      byId('watch-status').textContent = `无法加载：${err.message}`;
    }
  }

  /** An alert's link opens this page (keeping ?api=) when it points at the page's own address. */
  function pageLink(link) {
    const url = new URL(link, window.location.href);
    const api = new URLSearchParams(window.location.search).get('api');
    const here = new URL(window.location.href);
    if (api && (url.searchParams.has('doc') || url.searchParams.has('q'))) {
      url.searchParams.set('api', api);
      return `${here.origin}${here.pathname}${url.search}`;
    }
    return url.href;
  }

  async function unwatch(w, button) {
    button.disabled = true;
    try {
      await api(`/watches/${encodeURIComponent(w.watch_id)}`, { method: 'DELETE' });
      announce(`已取消关注：${describe(w)}`);
      await showWatches();
    } catch (err) {
      button.disabled = false;
      button.after(el('span', { class: 'watch-error', role: 'alert' }, err.message));
    }
  }

  // --- an address that opens a document: ?doc=<doc_id>&article=<label> (exports and alerts link to it) ------

  function openFromAddress() {
    const params = new URLSearchParams(window.location.search);
    const docId = params.get('doc');
    if (!docId || typeof window.openArticle !== 'function') return;
    window.openArticle({ doc_id: docId, article: params.get('article') || undefined }, null);
  }

  function init() {
    document.addEventListener('regrag:answer', onAnswer);
    document.addEventListener('regrag:document', onDocument);
    const tab = byId('tab-watch');
    if (tab) {
      tab.addEventListener('click', showWatches);
      byId('watch-refresh').addEventListener('click', showWatches);
      if (window.location.hash === '#watches') tab.click();
    }
    openFromAddress();
  }

  init();
})();
