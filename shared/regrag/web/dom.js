// What every script of the page shares (app.js, check.js, watch.js; loaded before them): building elements
// without HTML, where the API lives and how it is called. Every string enters the page as a text node or an attribute value,
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

class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status; // 0: no HTTP response at all
    this.code = code;
    this.details = details || {};
  }
}

/** One call to the API: its JSON answer, or an ApiError (status 0 when no HTTP response came at all). */
async function api(path, { method = 'GET', body, signal } = {}) {
  const base = apiBase();
  const where = base || window.location.origin;
  let response;
  try {
    response = await fetch(base + path, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network', `无法连接服务器 ${where}（${err.message}）。请检查网络或服务是否在运行。`);
  }
  const raw = await response.text();
  let data = null;
  try {
    data = raw ? JSON.parse(raw) : null;
  } catch {
    data = null; // a proxy's HTML error page, say: reported below with the HTTP status
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    const message = error.message || `${response.status} ${response.statusText || ''}`.trim();
    throw new ApiError(response.status, error.code || 'http_error', message, error);
  }
  if (data === null || typeof data !== 'object') {
    throw new ApiError(response.status, 'bad_response', `服务器 ${where} 返回的内容不是 JSON。`);
  }
  return data;
}
