// What every script of the page shares (app.js, check.js, watch.js; loaded before them): building elements
// without HTML, and where the API lives. Every string enters the page as a text node or an attribute value,
// never as HTML, so a regulation's text (or a hostile API) cannot inject markup.
'use strict';

/** Replaces an element's content. Strings become text nodes; nested arrays flatten; null/false are skipped. */
function fill(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

/** Creates an element with `props` (`on<event>` props become listeners) and `children` (as in fill). */
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  return fill(el, ...children);
}

/** The API base URL: ?api= beats <meta name="regrag-api">; empty means this page's origin. */
function apiBase() {
  const fromQuery = new URLSearchParams(window.location.search).get('api');
  const meta = document.querySelector('meta[name="regrag-api"]');
  const raw = (fromQuery || (meta && meta.content) || '').trim();
  if (!raw) return '';
  const url = new URL(raw, window.location.href);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`API 地址必须是 http(s) 网址：${raw}`);
  }
  return url.href.replace(/\/+$/, '');
}
