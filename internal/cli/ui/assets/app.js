// mcpspec ui. Every string a server, a collection or a run sends is rendered as text: this file
// never assigns innerHTML/outerHTML, never calls insertAdjacentHTML or document.write, never
// builds a URL or an attribute from server text, and never evaluates code. The page's
// Content-Security-Policy forbids inline script and eval in any case.

// ---- DOM helpers ---------------------------------------------------------------------------

// el creates an element; attrs are set as properties from a fixed list or as class/data-*;
// children are nodes or strings (text nodes).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('data-')) e.dataset[k.slice(5).replace(/-([a-z])/g, (_, c) => c.toUpperCase())] = String(v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (['id', 'type', 'value', 'title', 'placeholder', 'checked', 'disabled', 'min', 'max', 'step', 'hidden', 'selected', 'rows', 'spellcheck', 'name'].includes(k)) e[k] = v;
    else throw new Error('el: attribute ' + k + ' not allowed');
  }
  append(e, children);
  return e;
}

function append(e, children) {
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function clear(e) {
  while (e.firstChild) e.removeChild(e.firstChild);
  return e;
}

const $ = (sel) => document.querySelector(sel);

function show(e, on) { e.hidden = !on; }

function pretty(v) {
  try { return JSON.stringify(v, null, 2); } catch { return String(v); }
}

// asText is any value as a short string, for labels built from server data.
function asText(v) {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : pretty(v);
}

// ---- token and API -------------------------------------------------------------------------

function takeToken() {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem('mcpspec-token', decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem('mcpspec-token') || '';
}

const token = takeToken();

async function api(method, path, body) {
  const opts = { method, headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  let data = null;
  try { data = await res.json(); } catch { data = null; }
  if (!res.ok) {
    const err = new Error((data && data.error) || (res.status + ' ' + res.statusText));
    err.status = res.status;
    err.data = data;
    throw err;
  }
  return data;
}

function banner(msg) {
  const b = $('#banner');
  clear(b);
  if (msg) append(b, [msg]);
  show(b, !!msg);
}

// ---- live events: SSE with reconnect and backoff ------------------------------------------

const handlers = {};
function on(type, fn) { (handlers[type] = handlers[type] || []).push(fn); }

let lastEventId = 0;
let backoff = 1000;
function stream() {
  const state = $('#stream-state');
  const es = new EventSource('/api/events?token=' + encodeURIComponent(token) + '&last=' + lastEventId);
  es.onopen = () => { backoff = 1000; state.textContent = 'live'; state.className = 'state live'; };
  for (const type of ['run.start', 'run.test', 'run.progress', 'run.log', 'run.done', 'run.step', 'session', 'ask', 'ask.done']) {
    es.addEventListener(type, (ev) => {
      lastEventId = Math.max(lastEventId, Number(ev.lastEventId) || 0);
      let data;
      try { data = JSON.parse(ev.data); } catch { return; }
      for (const fn of handlers[type] || []) fn(data);
    });
  }
  es.onerror = () => {
    es.close();
    state.textContent = 'reconnecting in ' + Math.round(backoff / 1000) + ' s…';
    state.className = 'state';
    setTimeout(stream, backoff);
    backoff = Math.min(backoff * 2, 30000);
  };
}

// ---- navigation ----------------------------------------------------------------------------

function goto(page) {
  for (const b of document.querySelectorAll('#nav button')) b.classList.toggle('active', b.dataset.page === page);
  for (const s of document.querySelectorAll('.page')) show(s, s.id === 'page-' + page);
  if (page === 'history') renderHistory();
  if (page === 'recordings') renderRecordings();
}

// ---- state ---------------------------------------------------------------------------------

let info = { servers: [], collections: [], history: false };
const sessions = new Map(); // id → session description
let current = null; // the session the inspector shows

function fillServerSelect(sel, withNone) {
  clear(sel);
  if (withNone) sel.appendChild(el('option', { value: '' }, '(none)'));
  for (const s of info.servers) {
    sel.appendChild(el('option', { value: s.spec }, s.name + ' — ' + s.source));
  }
}

// ---- servers page --------------------------------------------------------------------------

function initServers() {
  const sel = $('#server-select');
  fillServerSelect(sel);
  $('#server-spec').value = sel.value;
  sel.addEventListener('change', () => { $('#server-spec').value = sel.value; });
  $('#connect-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const err = $('#connect-error');
    show(err, false);
    const btn = $('#connect');
    btn.disabled = true;
    btn.textContent = 'Connecting…';
    try {
      const s = await api('POST', '/api/sessions', { server: $('#server-spec').value.trim() });
      sessions.set(s.id, s);
      renderSession(s);
      selectSession(s.id);
    } catch (e) {
      clear(err);
      append(err, [e.message, e.data && e.data.failure && e.data.failure.hint ? '\nhint: ' + e.data.failure.hint : '']);
      show(err, true);
    } finally {
      btn.disabled = false;
      btn.textContent = 'Connect';
    }
  });
}

function kv(pairs) {
  const dl = el('dl', { class: 'kv' });
  for (const [k, v] of pairs) append(dl, [el('dt', {}, k), el('dd', {}, asText(v))]);
  return dl;
}

function renderSession(s) {
  const box = el('div', { class: 'card session', id: 'session-' + s.id, 'data-session': s.id });
  const proc = el('div', { class: 'process' });
  append(box, [
    el('div', { class: 'row' },
      el('h3', { class: 'grow' }, asText(s.serverInfo && s.serverInfo.name), ' ', el('span', { class: 'muted' }, asText(s.serverInfo && s.serverInfo.version))),
      el('button', { class: 'secondary', onclick: () => { selectSession(s.id); goto('inspector'); } }, 'Inspect'),
      el('button', { class: 'secondary', onclick: () => disconnect(s.id) }, 'Disconnect')),
    kv([['SPEC', s.spec], ['transport', s.transport], ['protocol version', s.protocolVersion], ['tools', String(s.tools.length)],
      ['resources', String(s.resources.length)], ['prompts', String(s.prompts.length)], ['pid', s.pid ? String(s.pid) : '— (not a child process)']]),
    s.instructions ? el('details', {}, el('summary', {}, 'instructions'), el('pre', {}, s.instructions)) : null,
    el('details', {}, el('summary', {}, 'capabilities'), el('pre', {}, pretty(s.capabilities))),
    s.listErrors && Object.keys(s.listErrors).length ? el('pre', { class: 'error' }, pretty(s.listErrors)) : null,
    proc,
  ]);
  $('#sessions').prepend(box);
  if (s.pid) monitor(s.id, proc);
}

// monitor polls the process monitor of a stdio session while it is open.
async function monitor(id, box) {
  while (sessions.has(id)) {
    try {
      const p = await api('GET', '/api/sessions/' + id + '/process');
      clear(box);
      append(box, [
        el('h4', {}, 'Process'),
        kv([['state', p.running ? 'running' : (p.exitCode !== undefined ? 'exited' : 'not running')],
          ['uptime', p.uptimeSec.toFixed(0) + ' s'], ['RSS', p.rssMb ? p.rssMb.toFixed(1) + ' MB' : '—'],
          ['CPU', p.cpuPercent !== undefined ? p.cpuPercent.toFixed(1) + ' %' : '—'], ['threads', p.threads || '—'],
          ['exit code', p.exitCode !== undefined ? String(p.exitCode) + (p.signal ? ' (' + p.signal + ')' : '') : '—']]),
        el('div', { class: 'muted' }, 'stderr'), el('pre', { class: 'stderr' }, p.stderr || '(empty)'),
        p.lastError ? el('div', { class: 'error' }, p.lastError) : null,
      ]);
    } catch (e) {
      if (e.status === 404) return;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

async function disconnect(id) {
  try { await api('DELETE', '/api/sessions/' + id); } catch { /* already gone */ }
  sessions.delete(id);
  const box = document.getElementById('session-' + id);
  if (box) box.remove();
  if (current && current.id === id) { current = null; renderInspector(); }
}

function selectSession(id) {
  current = sessions.get(id) || null;
  renderInspector();
}

// ---- inspector -----------------------------------------------------------------------------

function renderInspector() {
  show($('#inspector'), !!current);
  show($('#inspector-empty'), !current);
  $('#inspector-session').textContent = current ? '— ' + current.spec : '';
  for (const id of ['#tools-list', '#resources-list', '#templates-list', '#prompts-list', '#item-view', '#call-result']) clear($(id));
  if (!current) return;
  for (const t of current.tools) {
    const li = el('li', { class: 'tool' }, el('span', { class: 'name' }, asText(t.name)),
      t.title ? el('span', { class: 'desc' }, asText(t.title)) : null,
      el('span', { class: 'desc' }, asText(t.description)));
    li.addEventListener('click', () => { mark(li); toolForm(t); });
    $('#tools-list').appendChild(li);
  }
  for (const r of current.resources) {
    const li = el('li', { class: 'resource' }, el('span', { class: 'name' }, asText(r.uri)),
      el('span', { class: 'desc' }, asText(r.name), ' ', asText(r.description)));
    li.addEventListener('click', () => { mark(li); readResource(r); });
    $('#resources-list').appendChild(li);
  }
  for (const t of current.resourceTemplates || []) {
    const li = el('li', { class: 'template' }, el('span', { class: 'name' }, asText(t.uriTemplate)),
      el('span', { class: 'desc' }, asText(t.name), ' ', asText(t.description)));
    li.addEventListener('click', () => { mark(li); templateForm(t); });
    $('#templates-list').appendChild(li);
  }
  for (const p of current.prompts) {
    const li = el('li', { class: 'prompt' }, el('span', { class: 'name' }, asText(p.name)), el('span', { class: 'desc' }, asText(p.description)));
    li.addEventListener('click', () => { mark(li); promptForm(p); });
    $('#prompts-list').appendChild(li);
  }
}

function mark(li) {
  for (const x of document.querySelectorAll('#inspector .list li.selected')) x.classList.remove('selected');
  li.classList.add('selected');
}

// fieldFor builds the input of one schema property; it returns [node, read] where read()
// gives the value to send (undefined: leave the argument out).
function fieldFor(name, schema, required) {
  schema = schema && typeof schema === 'object' ? schema : {};
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  const label = el('label', { class: 'field' }, el('span', {}, name + (required ? ' *' : '')),
    schema.title ? el('span', { class: 'muted' }, asText(schema.title)) : null,
    schema.description ? el('span', { class: 'muted' }, asText(schema.description)) : null);
  let input, read;
  if (Array.isArray(schema.enum)) {
    input = el('select', {}, required ? null : el('option', { value: '' }, '(unset)'));
    schema.enum.forEach((v, i) => {
      const o = el('option', { value: String(i) }, asText(v));
      if (schema.default !== undefined && JSON.stringify(v) === JSON.stringify(schema.default)) o.selected = true;
      input.appendChild(o);
    });
    read = () => (input.value === '' ? undefined : schema.enum[Number(input.value)]);
  } else if (type === 'string') {
    input = el('input', { type: 'text', spellcheck: false, value: typeof schema.default === 'string' ? schema.default : '' });
    read = () => (input.value === '' && !required ? undefined : input.value);
  } else if (type === 'number' || type === 'integer') {
    input = el('input', { type: 'number', step: type === 'integer' ? '1' : 'any', value: typeof schema.default === 'number' ? String(schema.default) : '' });
    read = () => (input.value === '' ? undefined : Number(input.value));
  } else if (type === 'boolean') {
    input = el('input', { type: 'checkbox', checked: schema.default === true });
    read = () => input.checked;
  } else {
    input = el('textarea', { rows: 3, spellcheck: false, value: schema.default !== undefined ? pretty(schema.default) : '' });
    read = () => {
      if (input.value.trim() === '') return undefined;
      return JSON.parse(input.value);
    };
  }
  input.dataset.arg = name;
  label.appendChild(input);
  return [label, read];
}

function toolForm(t) {
  const view = clear($('#item-view'));
  clear($('#call-result'));
  const schema = t.inputSchema && typeof t.inputSchema === 'object' ? t.inputSchema : {};
  const props = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  const readers = [];
  const fields = el('div', { class: 'fields' });
  for (const [name, ps] of Object.entries(props)) {
    const [node, read] = fieldFor(name, ps, required.includes(name));
    fields.appendChild(node);
    readers.push([name, read]);
  }
  const rawBox = el('textarea', { id: 'raw-args', rows: 4, spellcheck: false, value: '' });
  const useRaw = el('input', { type: 'checkbox', id: 'use-raw' });
  const btn = el('button', { id: 'call-btn', type: 'submit' }, 'Call');
  const form = el('form', { id: 'tool-form' },
    el('h3', {}, asText(t.name)),
    t.title ? el('div', { class: 'muted' }, asText(t.title)) : null,
    el('p', {}, asText(t.description)),
    schema.title ? el('div', { class: 'muted' }, 'schema: ', asText(schema.title)) : null,
    fields,
    el('label', {}, el('span', {}, 'send raw JSON arguments instead ', useRaw), rawBox),
    btn,
    el('details', {}, el('summary', {}, 'inputSchema'), el('pre', {}, pretty(t.inputSchema))),
    t.annotations ? el('details', {}, el('summary', {}, 'annotations'), el('pre', {}, pretty(t.annotations))) : null);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    let args = {};
    try {
      if (useRaw.checked) args = JSON.parse(rawBox.value || '{}');
      else for (const [name, read] of readers) { const v = read(); if (v !== undefined) args[name] = v; }
    } catch (e) {
      showResult({ ok: false, error: { message: 'arguments: ' + e.message }, frames: [] });
      return;
    }
    btn.disabled = true;
    try { showResult(await api('POST', '/api/sessions/' + current.id + '/call', { tool: t.name, arguments: args })); }
    catch (e) { showResult({ ok: false, error: { message: e.message }, frames: [] }); }
    finally { btn.disabled = false; }
  });
  view.appendChild(form);
}

async function readResource(r) {
  const view = clear($('#item-view'));
  append(view, [el('h3', {}, asText(r.uri)), el('p', {}, asText(r.title || r.name)), el('p', { class: 'muted' }, asText(r.description))]);
  try { showResult(await api('POST', '/api/sessions/' + current.id + '/read', { uri: r.uri })); }
  catch (e) { showResult({ ok: false, error: { message: e.message }, frames: [] }); }
}

function promptForm(p) {
  const view = clear($('#item-view'));
  clear($('#call-result'));
  const inputs = [];
  const form = el('form', { id: 'prompt-form' }, el('h3', {}, asText(p.name)), el('p', {}, asText(p.description)));
  for (const a of Array.isArray(p.arguments) ? p.arguments : []) {
    const input = el('input', { type: 'text', spellcheck: false });
    inputs.push([asText(a.name), input]);
    form.appendChild(el('label', { class: 'field' }, el('span', {}, asText(a.name) + (a.required ? ' *' : '')), el('span', { class: 'muted' }, asText(a.description)), input,
      completer(input, { type: 'ref/prompt', name: p.name }, a.name)));
  }
  form.appendChild(el('button', { type: 'submit' }, 'Get prompt'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const args = {};
    for (const [n, i] of inputs) if (i.value !== '') args[n] = i.value;
    try { showResult(await api('POST', '/api/sessions/' + current.id + '/prompt', { name: p.name, arguments: args })); }
    catch (e) { showResult({ ok: false, error: { message: e.message }, frames: [] }); }
  });
  view.appendChild(form);
}

// completer asks the server's completion/complete for the input's argument as the person
// types (debounced) and offers the values as text; clicking one fills the input. An answer
// that comes after a newer question is dropped.
function completer(input, ref, argument) {
  const list = el('ul', { class: 'completions' });
  const session = current;
  let timer = null;
  let asked = 0;
  const ask = async () => {
    const n = ++asked;
    let res;
    try { res = await api('POST', '/api/sessions/' + session.id + '/complete', { ref, argument: asText(argument), value: input.value }); } catch { res = { values: [] }; }
    if (n !== asked) return;
    clear(list);
    for (const v of res.values || []) {
      list.appendChild(el('li', { onclick: () => { input.value = v; clear(list); } }, v));
    }
    if (res.hasMore) list.appendChild(el('li', { class: 'muted' }, '…' + (res.total ? ' (' + res.total + ' in all)' : '')));
  };
  input.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(ask, 250); });
  input.addEventListener('focus', () => { if (!list.firstChild) { clearTimeout(timer); timer = setTimeout(ask, 250); } });
  return list;
}

// templateVars are the variable names of a URI template (RFC 6570 operators stripped).
function templateVars(tmpl) {
  const names = [];
  for (const m of String(tmpl).matchAll(/\{([^}]*)\}/g)) {
    for (const v of m[1].replace(/^[+#./;?&]/, '').split(',')) {
      const n = v.replace(/[*]$|:\d+$/, '');
      if (n && !names.includes(n)) names.push(n);
    }
  }
  return names;
}

// templateForm fills a resource template's variables (with completion) and reads the result.
function templateForm(t) {
  const view = clear($('#item-view'));
  clear($('#call-result'));
  const inputs = [];
  const form = el('form', { id: 'template-form' }, el('h3', {}, asText(t.uriTemplate)), el('p', {}, asText(t.name), ' ', asText(t.description)));
  for (const name of templateVars(t.uriTemplate)) {
    const input = el('input', { type: 'text', spellcheck: false, 'data-arg': name });
    inputs.push([name, input]);
    form.appendChild(el('label', { class: 'field' }, el('span', {}, name), input, completer(input, { type: 'ref/resource', uri: t.uriTemplate }, name)));
  }
  form.appendChild(el('button', { type: 'submit' }, 'Read'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const vals = Object.fromEntries(inputs.map(([n, i]) => [n, i.value]));
    const uri = String(t.uriTemplate).replace(/\{([+#./;?&]?)([^}]*)\}/g, (_, op, names) =>
      names.split(',').map((v) => encodeURIComponent(vals[v.replace(/[*]$|:\d+$/, '')] || '')).join(','));
    try { showResult(await api('POST', '/api/sessions/' + current.id + '/read', { uri })); }
    catch (e) { showResult({ ok: false, error: { message: e.message }, frames: [] }); }
  });
  view.appendChild(form);
}

function showResult(res) {
  const box = clear($('#call-result'));
  let status;
  if (!res.ok) status = el('div', { class: 'status bad' }, 'error', res.error && res.error.category ? ' (' + res.error.category + ')' : '');
  else if (res.isError) status = el('div', { class: 'status warn' }, 'tool error (isError)');
  else status = el('div', { class: 'status ok' }, 'ok');
  append(box, [el('h3', {}, 'Result'), status, el('div', { class: 'muted' }, (res.latencyMs || 0).toFixed(1) + ' ms')]);
  if (res.error) {
    append(box, [el('pre', { class: 'error', id: 'call-error' }, asText(res.error.message) + (res.error.data ? '\ndata: ' + res.error.data : '') + (res.error.hint ? '\nhint: ' + res.error.hint : ''))]);
  }
  if (res.result !== undefined && res.result !== null) {
    const texts = [];
    for (const c of Array.isArray(res.result.content) ? res.result.content : []) if (c && typeof c.text === 'string') texts.push(c.text);
    for (const c of Array.isArray(res.result.contents) ? res.result.contents : []) if (c && typeof c.text === 'string') texts.push(c.text);
    if (texts.length) append(box, [el('div', { class: 'muted' }, 'text'), el('pre', { id: 'call-text' }, texts.join('\n'))]);
    append(box, [el('div', { class: 'muted' }, 'result'), el('pre', { id: 'call-json' }, pretty(res.result))]);
  }
  const frames = res.frames || [];
  if (frames.length) {
    const t0 = Date.parse(frames[0].at);
    const tb = el('tbody');
    for (const f of frames) {
      tb.appendChild(el('tr', {}, el('td', {}, (f.dir === 'sent' ? '→ ' : '← ') + '+' + (Date.parse(f.at) - t0).toFixed(0) + ' ms'),
        el('td', {}, el('pre', {}, f.data + (f.error ? '\n' + f.error : '')))));
    }
    append(box, [el('h4', {}, 'Frames'), el('table', { class: 'grid frames' }, tb)]);
  }
}

// ---- server requests answered by the person at the page -------------------------------------

const asks = new Map(); // ask id → {session, ask}

on('ask', (d) => { asks.set(d.session + '/' + d.ask.id, d); renderAsks(); });
on('ask.done', (d) => { asks.delete(d.session + '/' + d.id); renderAsks(); });

// askTemplate is a reply to fill in: the shape the protocol asks for.
function askTemplate(a) {
  if (a.method === 'sampling/createMessage') return { role: 'assistant', content: { type: 'text', text: '' }, model: 'human', stopReason: 'endTurn' };
  return { action: 'accept', content: {} };
}

function renderAsks() {
  const box = clear($('#asks'));
  for (const { session, ask } of asks.values()) {
    const reply = el('textarea', { rows: 6, spellcheck: false, value: pretty(askTemplate(ask)) });
    const err = el('div', { class: 'error' });
    const send = async (body) => {
      try { await api('POST', '/api/sessions/' + session + '/asks/' + ask.id, body); } catch (e) { err.textContent = e.message; }
    };
    box.appendChild(el('div', { class: 'card ask', 'data-ask': ask.id },
      el('h4', {}, 'The server asks: ' + ask.method, el('span', { class: 'muted' }, ' (session ' + session + ')')),
      el('pre', {}, pretty(ask.params)),
      el('label', {}, 'Your reply (JSON result)', reply),
      el('div', { class: 'row' },
        el('button', { class: 'answer', onclick: () => {
          let result;
          try { result = JSON.parse(reply.value); } catch (e) { err.textContent = 'reply: ' + e.message; return; }
          send({ result });
        } }, 'Answer'),
        el('button', { class: 'secondary decline', onclick: () => send({ decline: 'declined by the user' }) }, 'Decline')),
      err));
  }
}

// ---- runs ----------------------------------------------------------------------------------

const runViews = new Map(); // run id → {onTest, onProgress, onLog, onDone}

on('run.test', (d) => { const v = runViews.get(d.run); if (v && v.onTest) v.onTest(d.test); });
on('run.progress', (d) => { const v = runViews.get(d.run); if (v && v.onProgress) v.onProgress(d.point); });
on('run.step', (d) => { const v = runViews.get(d.run); if (v && v.onStep) v.onStep(d.paused); });
on('run.log', (d) => { const v = runViews.get(d.run); if (v && v.onLog) v.onLog(d.line); });
on('run.done', async (d) => {
  const v = runViews.get(d.run);
  if (!v || v.finished) return;
  v.finished = true;
  try { v.onDone(await api('GET', '/api/runs/' + d.run)); } catch (e) { v.onDone({ exitCode: d.exitCode, error: e.message }); }
});

// startRun posts a run and wires its live view; it also polls, so a run ends on the page even
// if the event stream dropped the run.done event.
async function startRun(req, view) {
  const r = await api('POST', '/api/runs', req);
  runViews.set(r.id, view);
  (async () => {
    // A stepped run may have paused before the page knew its id: ask once at the start.
    let first = !!view.onStep;
    while (!view.finished) {
      if (first) {
        first = false;
        try { const s = await api('GET', '/api/runs/' + r.id); if (s.paused && !view.finished) view.onStep(s.paused); } catch { /* the events will tell */ }
      }
      await new Promise((res) => setTimeout(res, 3000));
      if (view.finished) return;
      try {
        const s = await api('GET', '/api/runs/' + r.id);
        if (s.done && !view.finished) { view.finished = true; view.onDone(s); }
      } catch { /* try again */ }
    }
  })();
  return r;
}

function exitText(code) {
  const names = { 0: 'passed', 1: 'failed', 2: 'runtime error', 3: 'config error', 4: 'connection error', 5: 'timeout', 6: 'security findings', 7: 'validation error', 8: 'not tested', 130: 'interrupted' };
  return 'exit ' + code + ' (' + (names[code] || 'error') + ')';
}

// ---- collections ---------------------------------------------------------------------------

function initCollections() {
  const tb = $('#collections');
  clear(tb);
  for (const c of info.collections) {
    tb.appendChild(el('tr', { 'data-path': c.path },
      el('td', {}, c.path), el('td', {}, c.name, c.error ? el('div', { class: 'error' }, c.error) : null),
      el('td', {}, String((c.tests || []).length)),
      el('td', {}, c.error ? null : el('button', { class: 'run-btn', onclick: () => runCollection(c.path) }, 'Run'))));
  }
  const sel = $('#load-collection');
  for (const c of info.collections) if (!c.error) sel.appendChild(el('option', { value: c.path }, c.path));
}

async function runCollection(path, test) {
  const box = clear($('#collection-run'));
  const live = el('ul', { class: 'list tests', id: 'run-tests' });
  const state = el('div', { id: 'run-state', class: 'muted' }, 'running…');
  const results = el('div', { id: 'run-results' });
  const panel = el('div', { id: 'step-panel' });
  const step = !test && $('#step-toggle').checked;
  append(box, [el('h3', {}, path, test ? ' › ' + test : ''), state, live, panel, results]);
  try {
    const r = await startRun({ kind: 'test', collection: path, test, step }, {
      onTest: (t) => live.appendChild(el('li', { class: t.ok ? 'ok' : 'bad' }, (t.ok ? '✓ ' : '✗ ') + t.name + (t.skip ? ' (skipped)' : ''))),
      onLog: (line) => { if (step) live.appendChild(el('li', { class: 'muted' }, line)); },
      onStep: (p) => renderPause(p, panel),
      onDone: (run) => { clear(panel); renderTestResults(path, run, state, live, results); },
    });

    state.textContent = 'running… ' + r.command;
  } catch (e) {
    state.textContent = e.message;
    state.className = 'error';
  }
}

// renderPause shows where a stepped run waits (p null: it goes on), with its variables (the
// secrets masked by the server) and the answers.
function renderPause(p, panel) {
  clear(panel);
  if (!p) return;
  const id = p.run;
  const err = el('div', { class: 'error' });
  const send = async (body) => {
    err.textContent = '';
    try { await api('POST', '/api/runs/' + id + '/step', body); } catch (e) { err.textContent = e.message; }
  };
  const tb = el('tbody');
  for (const [k, v] of Object.entries(p.vars || {})) {
    const input = el('input', { value: v, spellcheck: false });
    tb.appendChild(el('tr', { class: 'step-var' }, el('td', {}, k), el('td', {}, input),
      el('td', {}, el('button', { class: 'secondary set-var', onclick: () => send({ action: 'set', name: k, value: input.value }) }, 'Set'))));
  }
  const newName = el('input', { id: 'step-new-name', placeholder: 'name', spellcheck: false });
  const newValue = el('input', { id: 'step-new-value', placeholder: 'value', spellcheck: false });
  tb.appendChild(el('tr', {}, el('td', {}, newName), el('td', {}, newValue),
    el('td', {}, el('button', { class: 'secondary', id: 'step-new-set', onclick: () => send({ action: 'set', name: newName.value.trim(), value: newValue.value }) }, 'Set'))));
  append(panel, [el('div', { class: 'card step-panel' },
    el('h4', { id: 'step-next' }, 'Paused before ' + p.collection + ' › ' + p.test + ' (' + (p.index + 1) + ' of ' + p.total + ')'),
    el('div', { class: 'muted' }, 'The run aborts if nobody answers by ' + new Date(p.deadline).toLocaleTimeString() + '.'),
    el('div', { class: 'row' },
      el('button', { id: 'step-continue', onclick: () => send({ action: 'continue' }) }, 'Continue'),
      el('button', { class: 'secondary', id: 'step-skip', onclick: () => send({ action: 'skip' }) }, 'Skip'),
      el('button', { class: 'secondary', id: 'step-abort', onclick: () => send({ action: 'abort' }) }, 'Abort')),
    el('h4', {}, 'Variables'), el('table', { class: 'grid', id: 'step-vars' }, tb), err)]);
}

function renderTestResults(path, run, state, live, results) {
  state.textContent = exitText(run.exitCode) + (run.dir ? ' — ' + run.dir : '');
  state.className = run.exitCode === 0 ? 'ok' : 'bad';
  const doc = run.result;
  if (!doc || !Array.isArray(doc.collections)) {
    append(results, [el('pre', {}, (run.log || []).join('\n'))]);
    return;
  }
  clear(live);
  const rank = { failed: 0, error: 1, skipped: 2, passed: 3 };
  const tests = [];
  for (const c of doc.collections) for (const t of c.tests || []) tests.push(t);
  tests.sort((a, b) => (rank[a.status] ?? 4) - (rank[b.status] ?? 4));
  const tb = el('tbody');
  for (const t of tests) {
    const detail = [];
    for (const f of t.failures || []) detail.push(el('div', { class: 'error' }, (f.line ? 'line ' + f.line + ': ' : '') + f.message + (f.expected ? '\nexpected: ' + f.expected : '') + (f.actual ? '\nactual: ' + f.actual : '')));
    if (t.error) detail.push(el('div', { class: 'error' }, (t.error.category ? t.error.category + ': ' : '') + t.error.message + (t.error.hint ? '\nhint: ' + t.error.hint : '')));
    if (t.skipReason) detail.push(el('div', { class: 'muted' }, t.skipReason));
    tb.appendChild(el('tr', { class: 'result-row', 'data-status': t.status },
      el('td', { class: t.status === 'passed' ? 'ok' : t.status === 'skipped' ? 'muted' : 'bad' }, t.status),
      el('td', {}, t.name, detail),
      el('td', {}, ((t.durationNs || 0) / 1e6).toFixed(1) + ' ms'),
      el('td', {}, el('button', { class: 'secondary rerun', onclick: () => runCollection(path, t.name) }, 'Re-run'))));
  }
  append(results, [el('table', { class: 'grid', id: 'results-table' }, tb)]);
}

// ---- load ----------------------------------------------------------------------------------

// chart draws points (x: seconds) of one or more series as an inline SVG polyline chart.
function chart(title, series, unit) {
  const NS = 'http://www.w3.org/2000/svg';
  const W = 400, H = 140, P = 24;
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  const all = series.flatMap((s) => s.points);
  const xmax = Math.max(1, ...all.map((p) => p[0]));
  const ymax = Math.max(1e-9, ...all.map((p) => p[1])) * 1.1;
  const axis = document.createElementNS(NS, 'path');
  axis.setAttribute('d', 'M' + P + ' 4 V' + (H - P) + ' H' + (W - 4));
  axis.setAttribute('stroke', '#999');
  axis.setAttribute('fill', 'none');
  svg.appendChild(axis);
  const label = document.createElementNS(NS, 'text');
  label.setAttribute('x', '2');
  label.setAttribute('y', '12');
  label.setAttribute('font-size', '10');
  label.textContent = (ymax / 1.1).toFixed(1) + ' ' + unit;
  svg.appendChild(label);
  for (const s of series) {
    const pl = document.createElementNS(NS, 'polyline');
    pl.setAttribute('fill', 'none');
    pl.setAttribute('stroke', s.color);
    pl.setAttribute('stroke-width', '1.5');
    pl.setAttribute('class', 'series');
    pl.setAttribute('points', s.points.map((p) => (P + (p[0] / xmax) * (W - P - 4)).toFixed(1) + ',' + (H - P - (p[1] / ymax) * (H - P - 4)).toFixed(1)).join(' '));
    svg.appendChild(pl);
  }
  const legend = el('div', { class: 'title' }, title, ' ', series.map((s) => el('span', { class: 'muted' }, ' ' + s.name + ' ' + (s.points.length ? s.points[s.points.length - 1][1].toFixed(1) : '–'))));
  return el('div', { class: 'chart' }, legend, svg);
}

function initLoad() {
  fillServerSelect($('#load-server'));
  $('#load-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const err = $('#load-error');
    show(err, false);
    const box = clear($('#load-run'));
    const points = [];
    const counter = el('div', { id: 'load-points', 'data-count': '0' }, '0 points');
    const charts = el('div', { class: 'charts', id: 'load-charts' });
    const state = el('div', { id: 'load-state', class: 'muted' }, 'starting…');
    const log = el('pre', { id: 'load-log', hidden: true });
    const summary = el('div', { id: 'load-summary' });
    append(box, [state, counter, charts, log, summary]);
    const draw = () => {
      const x = (p) => p.elapsedMs / 1000;
      clear(charts);
      append(charts, [
        chart('Rate', [{ name: 'req/s', color: '#0b5cad', points: points.map((p) => [x(p), p.rps]) }], '/s'),
        chart('Latency', [{ name: 'p50', color: '#1a7f37', points: points.map((p) => [x(p), p.p50Ms]) },
          { name: 'p99', color: '#cf222e', points: points.map((p) => [x(p), p.p99Ms]) }], 'ms'),
        chart('Errors', [{ name: 'errors', color: '#cf222e', points: points.map((p) => [x(p), p.errors]) }], ''),
        chart('Server RSS', [{ name: 'MB', color: '#9a6700', points: points.filter((p) => p.rssMb).map((p) => [x(p), p.rssMb]) }], 'MB'),
      ]);
      counter.dataset.count = String(points.length);
      counter.textContent = points.length + ' points, ' + (points.length ? points[points.length - 1].requests : 0) + ' requests';
    };
    draw();
    const col = $('#load-collection').value;
    const req = col ? { kind: 'load', collection: col, rate: $('#load-rate').value, duration: $('#load-duration').value }
      : { kind: 'load', server: $('#load-server').value, tool: $('#load-tool').value, args: $('#load-args').value, rate: $('#load-rate').value, duration: $('#load-duration').value };
    try {
      const r = await startRun(req, {
        onProgress: (p) => { points.push(p); draw(); },
        onLog: (line) => { log.hidden = false; log.textContent += line + '\n'; },
        onDone: (run) => {
          state.textContent = exitText(run.exitCode) + (run.dir ? ' — ' + run.dir : '');
          state.className = run.exitCode === 0 ? 'ok' : 'bad';
          if (points.length === 0 && run.progress) { points.push(...run.progress); draw(); }
          const m = run.result;
          if (m) {
            const th = m.throughput || {};
            const lat = m.latency_ms || {};
            const errs = m.errors || {};
            append(summary, [kv([['verdict', m.passed ? 'passed' : 'failed'], ['requests', asText(th.total_requests)],
              ['rate', (th.requests_per_sec || 0).toFixed(1) + '/s'], ['p50 / p99', asText(lat.p50) + ' / ' + asText(lat.p99) + ' ms'],
              ['errors', asText(errs.total)]]),
            el('details', {}, el('summary', {}, 'metrics.json'), el('pre', {}, pretty(m)))]);
          }
        },
      });
      state.textContent = 'running… ' + r.command;
    } catch (e) {
      clear(err);
      append(err, [e.message]);
      show(err, true);
    }
  });
}

// ---- detectors, audit and score ------------------------------------------------------------

function initRunner(box) {
  const kinds = box.dataset.kinds.split(',');
  const kind = el('select', { class: 'kind' }, kinds.map((k) => el('option', { value: k }, k)));
  const server = el('select', { class: 'server' });
  fillServerSelect(server);
  const tool = el('input', { class: 'tool', placeholder: 'tool (race needs one)', spellcheck: false });
  const slow = el('input', { class: 'slow-tool', placeholder: 'slow tool', spellcheck: false });
  const fast = el('input', { class: 'fast-tool', placeholder: 'fast tool', spellcheck: false });
  const out = el('div', { class: 'out' });
  const btn = el('button', { type: 'submit', class: 'start' }, 'Run');
  const form = el('form', { class: 'row wrap' }, el('label', {}, 'Kind', kind), el('label', {}, 'Server', server),
    kinds.includes('race') ? el('label', {}, 'Tool', tool) : null,
    kinds.includes('head-of-line') ? [el('label', {}, 'Head-of-line: slow tool', slow), el('label', {}, 'fast tool', fast)] : null, btn);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clear(out);
    const state = el('div', { class: 'muted state-line' }, 'running…');
    const log = el('pre', { class: 'log' });
    const result = el('div', { class: 'result' });
    append(out, [state, log, result]);
    try {
      const r = await startRun({ kind: kind.value, server: server.value, tool: tool.value.trim(), slowTool: slow.value.trim(), fastTool: fast.value.trim() }, {
        onLog: (line) => { log.textContent += line + '\n'; },
        onDone: (run) => {
          state.textContent = exitText(run.exitCode);
          state.className = 'state-line ' + (run.exitCode === 0 ? 'ok' : 'bad');
          if (run.result) append(result, [el('h4', {}, 'Report (evidence)'), el('pre', { class: 'report' }, pretty(run.result))]);
          else if (!log.textContent) log.textContent = (run.log || []).join('\n');
        },
      });
      state.textContent = 'running… ' + r.command;
    } catch (e) {
      state.textContent = e.message;
      state.className = 'error';
    }
  });
  append(box, [form, out]);
}

// ---- recordings ----------------------------------------------------------------------------

function fmtSize(n) {
  if (n < 1024) return n + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KB';
  return (n / 1024 / 1024).toFixed(1) + ' MB';
}

async function renderRecordings() {
  const box = clear($('#recordings'));
  try {
    const doc = await api('GET', '/api/recordings');
    const rows = doc.recordings || [];
    if (!rows.length) {
      box.appendChild(el('p', { class: 'muted', id: 'recordings-empty' }, 'No recordings in ' + doc.dir + ': make one with mcpspec proxy --server SPEC, or mcpspec record start NAME --server SPEC.'));
      return;
    }
    const tb = el('tbody');
    for (const r of rows) {
      tb.appendChild(el('tr', { class: 'recording-row' },
        el('td', {}, r.error ? r.name : el('button', { class: 'secondary open-rec', onclick: () => openRecording(r.name) }, r.name)),
        el('td', {}, r.error ? '-' : String(r.frames)),
        el('td', {}, r.error ? '-' : (r.durationMs / 1000).toFixed(3) + ' s'),
        el('td', {}, r.error ? el('span', { class: 'error' }, 'unreadable: ' + r.error) : asText(r.server)),
        el('td', {}, fmtSize(r.size || 0))));
    }
    box.appendChild(el('table', { class: 'grid', id: 'recordings-table' },
      el('thead', {}, el('tr', {}, ['Name', 'Frames', 'Duration', 'Server', 'Size'].map((h) => el('th', {}, h)))), tb));
  } catch (e) {
    box.appendChild(el('p', { class: 'error' }, e.message));
  }
}

// openRecording shows a recording's frames (text only: a server chose what they say) and a
// form to replay it against an allowed server.
async function openRecording(name) {
  const box = clear($('#recording-view'));
  let rec;
  try { rec = await api('GET', '/api/recordings/' + encodeURIComponent(name)); } catch (e) {
    box.appendChild(el('p', { class: 'error' }, e.message));
    return;
  }
  const h = rec.header || {};
  append(box, [el('h3', {}, rec.name),
    kv([['server', h.server], ['transport', h.transport], ['protocol version', h.protocolVersion], ['started', h.started],
      ['frames', rec.total > rec.frames.length ? rec.frames.length + ' of ' + rec.total + ' shown' : String(rec.total)]])]);
  const server = el('select', { class: 'server', id: 'replay-server' });
  fillServerSelect(server);
  const out = el('div', { id: 'replay-out' });
  const form = el('form', { class: 'row wrap', id: 'replay-form' }, el('label', {}, 'Replay against', server), el('button', { type: 'submit', id: 'replay-start' }, 'Replay'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clear(out);
    const state = el('div', { class: 'muted', id: 'replay-state' }, 'replaying…');
    const result = el('div');
    append(out, [state, result]);
    try {
      const r = await startRun({ kind: 'replay', recording: rec.name, server: server.value }, {
        onLog: () => {},
        onDone: (run) => renderReplay(run, state, result),
      });
      state.textContent = 'replaying… ' + r.command;
    } catch (e) {
      state.textContent = e.message;
      state.className = 'error';
    }
  });
  append(box, [form, out]);
  const tb = el('tbody');
  for (const f of rec.frames) {
    tb.appendChild(el('tr', { class: 'rec-frame' },
      el('td', {}, (f.dir === 'c2s' ? '→ client to server' : '← server to client')),
      el('td', {}, '+' + Number(f.ms).toFixed(1) + ' ms', f.httpStatus ? ' (HTTP ' + f.httpStatus + ')' : ''),
      el('td', {}, el('pre', {}, f.data + (f.truncated ? '\n… cut at the size limit (' + f.size + ' bytes)' : '')))));
  }
  append(box, [el('h4', {}, 'Frames'), el('table', { class: 'grid frames', id: 'recording-frames' }, tb)]);
}

function renderReplay(run, state, box) {
  state.textContent = exitText(run.exitCode);
  state.className = run.exitCode === 0 ? 'ok' : 'bad';
  const rep = run.result;
  if (!rep || !Array.isArray(rep.results)) {
    append(box, [el('pre', { class: 'error' }, (run.log || []).join('\n'))]);
    return;
  }
  append(box, [el('p', { id: 'replay-counts' }, (rep.clean ? 'clean' : 'differs') + ': ' + rep.matched + ' matched, ' + rep.changed + ' changed, ' +
    rep.added + ' added, ' + rep.removed + ' removed')]);
  const tb = el('tbody');
  for (const r of rep.results) {
    const changes = (r.changes || []).map((c) => el('div', {}, c.path + ': ' + (c.recorded === undefined ? '(absent)' : JSON.stringify(c.recorded)) +
      ' → ' + (c.replayed === undefined ? '(absent)' : JSON.stringify(c.replayed))));
    tb.appendChild(el('tr', { class: 'replay-row', 'data-status': r.status },
      el('td', { class: r.status === 'matched' ? 'ok' : 'bad' }, r.status), el('td', {}, asText(r.method), ' (id ', JSON.stringify(r.id), ')'),
      el('td', {}, changes)));
  }
  append(box, [el('table', { class: 'grid', id: 'replay-results' }, tb)]);
}

// ---- history -------------------------------------------------------------------------------

async function renderHistory() {
  const box = clear($('#history'));
  if (!info.history) {
    box.appendChild(el('p', { class: 'muted', id: 'history-unavailable' }, 'history not available'));
    return;
  }
  try {
    const runs = await api('GET', '/api/history/runs?limit=100');
    const tb = el('tbody');
    for (const r of runs) {
      tb.appendChild(el('tr', {}, el('td', {}, new Date(r.started).toLocaleString()), el('td', {}, r.kind), el('td', {}, r.branch || ''),
        el('td', { class: r.passed ? 'ok' : 'bad' }, r.passed ? 'passed' : 'failed'), el('td', {}, r.summary || ''), el('td', { class: 'muted' }, r.dir || '')));
    }
    append(box, [el('table', { class: 'grid', id: 'history-runs' }, el('thead', {}, el('tr', {}, ['When', 'Kind', 'Branch', 'Verdict', 'Summary', 'Directory'].map((h) => el('th', {}, h)))), tb)]);
    const branch = runs.length ? runs[0].branch || '' : '';
    const charts = el('div', { class: 'charts' });
    box.appendChild(charts);
    for (const [kind, name, unit] of [['test', 'pass rate', '%'], ['load', 'p99', 'ms'], ['score', 'score', '']]) {
      const pts = await api('GET', '/api/history/trend?branch=' + encodeURIComponent(branch) + '&kind=' + kind);
      charts.appendChild(chart(name + ' (' + (branch || 'all branches') + ')', [{ name, color: '#0b5cad', points: pts.map((p, i) => [i, p.value]) }], unit));
    }
  } catch (e) {
    box.appendChild(el('p', { class: 'error' }, e.message));
  }
}

// ---- start ---------------------------------------------------------------------------------

async function main() {
  for (const b of document.querySelectorAll('#nav button')) b.addEventListener('click', () => goto(b.dataset.page));
  if (!token) {
    banner('No token: open the URL that mcpspec ui printed (it ends with #token=…).');
    return;
  }
  try {
    info = await api('GET', '/api/info');
  } catch (e) {
    banner(e.status === 401 ? 'The token was refused: open the URL that mcpspec ui printed.' : 'mcpspec ui is not reachable: ' + e.message);
    return;
  }
  initServers();
  initCollections();
  initLoad();
  initRunner($('#detectors'));
  initRunner($('#analysis'));
  stream();
  document.body.dataset.ready = 'true';
}

main();
