// The gateway's operations console (docs/gateway.md#console). Plain browser JavaScript, no library.
//
// Two rules hold everywhere below:
// - the admin token lives in one variable of this closure: never in a URL, never in storage, sent
//   only as "Authorization: Bearer" to this page's own origin (the CSP allows no other);
// - data reaches the page through textContent and DOM calls only, never parsed as markup: scopes and keys
//   are whatever clients sent.
'use strict';

(() => {
  const POLL_MILLIS = 2000;
  const WINDOW_MILLIS = 5 * 60 * 1000;
  const IN_FLIGHT_LIMIT = 100;

  // The meters once-micrometer's OnceMetrics registers, as Prometheus names them (the table in
  // docs/gateway.md#metrics). Counters are summed over all their tags and shown as a rate; the store
  // timer as the mean time of the store calls made since the previous sample.
  const SERIES = [
    { id: 'executions', title: 'Executions', unit: '/s', counter: 'once_executions_total' },
    { id: 'replays', title: 'Replays', unit: '/s', counter: 'once_replays_total' },
    {
      id: 'conflicts', title: 'In-flight conflicts (409)', unit: '/s',
      counter: 'once_inflight_conflicts_total',
    },
    {
      id: 'mismatches', title: 'Fingerprint mismatches (422)', unit: '/s',
      counter: 'once_fingerprint_mismatches_total',
    },
    {
      id: 'latency', title: 'Store call time (mean)', unit: 'ms',
      sum: 'once_store_calls_seconds_sum', count: 'once_store_calls_seconds_count',
    },
  ];

  let token = null;
  let pollTimer = null;
  let previous = null; // the last sample: { at, totals }
  const points = new Map(SERIES.map((s) => [s.id, []])); // id -> [{ at, value|null }]
  const charts = new Map(); // id -> { canvas, value, peak }

  const $ = (id) => document.getElementById(id);

  // ---- calls ---------------------------------------------------------------------------------

  /** One call to this gateway with the token; resolves to { status, body, text } or throws. */
  async function call(method, path) {
    const response = await fetch(path, {
      method,
      headers: { Authorization: 'Bearer ' + token },
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
    });
    const text = await response.text();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch (e) {
      // not JSON: /metrics, or an error page from something in between
    }
    return { status: response.status, body, text };
  }

  /** What a failed call means, in words; the gateway's own error text when it sent one. */
  function failure(result) {
    if (result.status === 401) return 'The gateway refused the token (401). Forget it and enter the right one.';
    if (result.status === 503) return 'The store is unavailable (503). Try again when it is back.';
    return 'HTTP ' + result.status + ': ' + errorText(result);
  }

  function errorText(result) {
    if (result.body && typeof result.body.error === 'string') return result.body.error;
    return result.text.slice(0, 200) || '(empty answer)';
  }

  function unreachable(error) {
    return 'Cannot reach the gateway: ' + (error && error.message ? error.message : String(error));
  }

  function query(params) {
    return '?' + new URLSearchParams(params).toString();
  }

  // ---- connecting ----------------------------------------------------------------------------

  async function connect(event) {
    event.preventDefault();
    const typed = $('token').value;
    $('token').value = '';
    if (!typed) return;
    token = typed;
    show($('login-error'), null);
    // The in-flight listing doubles as the token check: 401 means a wrong token whether or not
    // this gateway has the listing yet.
    let result;
    try {
      result = await listInFlight();
    } catch (e) {
      token = null;
      show($('login-error'), unreachable(e));
      return;
    }
    if (result.status === 401) {
      token = null;
      show($('login-error'), failure(result));
      return;
    }
    $('login').hidden = true;
    $('console').hidden = false;
    setStatus('Connected', 'ok');
    drawAll();
    poll();
  }

  function disconnect() {
    token = null;
    clearTimeout(pollTimer);
    pollTimer = null;
    previous = null;
    points.forEach((list) => { list.length = 0; });
    $('console').hidden = true;
    $('login').hidden = false;
    setStatus('Not connected', '');
    $('token').focus();
  }

  function setStatus(text, kind) {
    const status = $('status');
    status.textContent = text;
    status.className = 'status ' + kind;
  }

  function show(element, text) {
    element.textContent = text || '';
    element.hidden = !text;
  }

  // ---- live rates ----------------------------------------------------------------------------

  async function poll() {
    if (token === null) return;
    try {
      const result = await call('GET', '/metrics');
      if (result.status === 200) {
        sample(Date.now(), totals(result.text));
        show($('metrics-error'), null);
        const count = points.get(SERIES[0].id).length;
        $('sampled').textContent = 'Last sample ' + new Date().toLocaleTimeString()
          + ' (' + count + (count === 1 ? ' point' : ' points') + ').';
      } else {
        show($('metrics-error'), failure(result));
        gap(Date.now());
      }
    } catch (e) {
      show($('metrics-error'), unreachable(e));
      gap(Date.now());
    }
    drawAll();
    if (token !== null) pollTimer = setTimeout(poll, POLL_MILLIS);
  }

  /** Sums of every series of each meter in Prometheus text (tags summed away). */
  function totals(text) {
    const sums = new Map();
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const nameEnd = line.search(/[{ ]/);
      if (nameEnd < 0) continue;
      const name = line.slice(0, nameEnd);
      // A tag value may hold spaces or braces: the value starts after the last closing brace.
      const rest = line[nameEnd] === '{' ? line.slice(line.lastIndexOf('}') + 1) : line.slice(nameEnd);
      const value = Number.parseFloat(rest.trim().split(/\s+/)[0]);
      if (Number.isFinite(value)) sums.set(name, (sums.get(name) || 0) + value);
    }
    return sums;
  }

  function sample(at, now) {
    if (previous !== null) {
      const seconds = (at - previous.at) / 1000;
      for (const s of SERIES) {
        const value = s.counter
          ? increase(previous.totals, now, s.counter) / seconds
          : meanMillis(previous.totals, now, s);
        push(s.id, at, value);
      }
    }
    previous = { at, totals: now };
  }

  /** How much a counter grew; after a restart of the gateway it counts from zero again. */
  function increase(before, after, name) {
    const a = after.get(name) || 0;
    const b = before.get(name) || 0;
    return a >= b ? a - b : a;
  }

  /** The mean time of the store calls between two samples, or null when none was made. */
  function meanMillis(before, after, s) {
    const calls = increase(before, after, s.count);
    return calls > 0 ? (increase(before, after, s.sum) / calls) * 1000 : null;
  }

  function gap(at) {
    previous = null;
    for (const s of SERIES) push(s.id, at, null);
  }

  function push(id, at, value) {
    const list = points.get(id);
    list.push({ at, value });
    while (list.length > 0 && list[0].at < at - WINDOW_MILLIS) list.shift();
  }

  function buildCharts() {
    const container = $('charts');
    for (const s of SERIES) {
      const card = document.createElement('div');
      card.className = 'chart';
      card.id = 'chart-' + s.id;
      const head = document.createElement('div');
      head.className = 'chart-head';
      const title = document.createElement('span');
      title.className = 'chart-title';
      title.textContent = s.title;
      title.title = s.counter || s.count;
      const value = document.createElement('span');
      value.className = 'chart-value';
      value.id = 'value-' + s.id;
      value.textContent = '–';
      head.append(title, value);
      const canvas = document.createElement('canvas');
      canvas.setAttribute('aria-label', s.title + ', up to the last 5 minutes');
      const foot = document.createElement('div');
      foot.className = 'chart-foot';
      const peak = document.createElement('span');
      peak.id = 'peak-' + s.id;
      peak.textContent = format(0, s.unit);
      const span = document.createElement('span');
      foot.append('peak ', peak, ' · ', span);
      card.append(head, canvas, foot);
      container.append(card);
      charts.set(s.id, { canvas, value, peak, span, unit: s.unit });
    }
    window.addEventListener('resize', drawAll);
  }

  function format(value, unit) {
    if (value === null || value === undefined) return '–';
    const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
    return value.toFixed(digits) + ' ' + unit;
  }

  function drawAll() {
    for (const s of SERIES) draw(s.id);
  }

  function draw(id) {
    const chart = charts.get(id);
    const list = points.get(id);
    const last = list.length > 0 ? list[list.length - 1].value : null;
    const peak = list.reduce((m, p) => (p.value !== null && p.value > m ? p.value : m), 0);
    chart.value.textContent = format(last, chart.unit);
    chart.peak.textContent = format(peak, chart.unit);
    chart.span.textContent = 'last ' + Math.round(axisSpan(Date.now()) / 60000) + ' min';

    const canvas = chart.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (width === 0 || height === 0) return;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);

    // The time axis ends now and goes back to the first sample, at least a minute and at most the
    // window; every chart shares it, so they line up.
    const end = Date.now();
    const span = axisSpan(end);
    const top = peak > 0 ? niceCeiling(peak) : 1;
    const x = (at) => ((at - (end - span)) / span) * (width - 4);
    const y = (v) => height - 2 - (v / top) * (height - 16);

    g.strokeStyle = '#e3e7ee';
    g.lineWidth = 1;
    g.beginPath();
    for (const fraction of [0, 0.5, 1]) {
      const gy = Math.round(y(top * fraction)) + 0.5;
      g.moveTo(0, gy);
      g.lineTo(width, gy);
    }
    g.stroke();
    g.fillStyle = '#8a94a6';
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'top';
    g.fillText(format(top, chart.unit), 4, 1);

    // The line and the area under it; a null point (no sample, or no store call) breaks the line.
    g.strokeStyle = '#2563eb';
    g.fillStyle = 'rgba(37, 99, 235, 0.12)';
    g.lineWidth = 1.5;
    let run = [];
    const flush = () => {
      if (run.length === 0) return;
      g.beginPath();
      run.forEach((p, i) => (i === 0 ? g.moveTo(x(p.at), y(p.value)) : g.lineTo(x(p.at), y(p.value))));
      g.stroke();
      g.lineTo(x(run[run.length - 1].at), y(0));
      g.lineTo(x(run[0].at), y(0));
      g.closePath();
      g.fill();
      if (run.length === 1) {
        g.beginPath();
        g.arc(x(run[0].at), y(run[0].value), 2, 0, 2 * Math.PI);
        g.stroke();
      }
      run = [];
    };
    for (const p of list) {
      if (p.value === null) flush();
      else run.push(p);
    }
    flush();
  }

  function axisSpan(end) {
    const first = points.get(SERIES[0].id)[0];
    const seen = first ? end - first.at : 0;
    return Math.min(WINDOW_MILLIS, Math.max(60 * 1000, seen));
  }

  /** 1, 2 or 5 times a power of ten, at least v: a readable top for the axis. */
  function niceCeiling(v) {
    const power = Math.pow(10, Math.floor(Math.log10(v)));
    for (const step of [1, 2, 5, 10]) {
      if (v <= step * power) return step * power;
    }
    return 10 * power;
  }

  // ---- key lookup ----------------------------------------------------------------------------

  async function lookup(event) {
    if (event) event.preventDefault();
    const scope = $('lookup-scope').value;
    const key = $('lookup-key').value;
    const out = $('lookup-result');
    out.hidden = false;
    out.replaceChildren(note('Looking up…', ''));
    let result;
    try {
      result = await call('GET', '/admin/records' + query({ scope, key }));
    } catch (e) {
      out.replaceChildren(note(unreachable(e), 'error'));
      return;
    }
    if (result.status === 404 && result.body && !result.body.state) {
      out.replaceChildren(note('No live record for this scope and key.', 'empty'));
      return;
    }
    if (result.status !== 200 || !result.body) {
      out.replaceChildren(note(failure(result), 'error'));
      return;
    }
    const table = document.createElement('table');
    table.className = 'record';
    for (const [name, value] of Object.entries(result.body)) {
      const row = table.insertRow();
      const th = document.createElement('th');
      th.textContent = name;
      row.append(th);
      row.insertCell().textContent = value === null ? '–' : String(value);
    }
    out.replaceChildren(table, releaseButton(result.body.scope || scope, result.body.key || key));
  }

  // ---- in flight -----------------------------------------------------------------------------

  function listInFlight() {
    const seconds = Math.max(0, Math.floor(Number($('inflight-older').value) || 0));
    return call(
      'GET',
      '/admin/records/in-flight' + query({ 'older-than': seconds + 's', limit: String(IN_FLIGHT_LIMIT) }),
    ).then((result) => {
      renderInFlight(result, seconds);
      return result;
    });
  }

  async function refreshInFlight(event) {
    if (event) event.preventDefault();
    try {
      await listInFlight();
    } catch (e) {
      $('inflight-result').replaceChildren(note(unreachable(e), 'error'));
    }
  }

  const IN_FLIGHT_COLUMNS = [
    ['scope', 'scope'],
    ['key', 'key'],
    ['running', (r) => duration(r.runningMillis)],
    ['lease left', (r) => duration(r.leaseRemainingMillis)],
    ['created', 'createdAt'],
    ['token', 'token'],
  ];

  function renderInFlight(result, seconds) {
    const out = $('inflight-result');
    if (result.status === 404) {
      // Before the listing exists the admin API answers "unknown admin action": say so, show nothing.
      out.replaceChildren(
        note(
          'This gateway does not list in-flight records (GET /admin/records/in-flight answered 404). '
            + 'Look keys up one by one above.',
          'empty',
        ),
      );
      return;
    }
    if (result.status !== 200 || !result.body || !Array.isArray(result.body.records)) {
      out.replaceChildren(note(failure(result), 'error'));
      return;
    }
    const records = result.body.records;
    if (records.length === 0) {
      out.replaceChildren(note('Nothing in flight for longer than ' + seconds + ' s.', 'empty'));
      return;
    }
    const table = document.createElement('table');
    table.className = 'inflight';
    const head = table.createTHead().insertRow();
    for (const [title] of IN_FLIGHT_COLUMNS) {
      const th = document.createElement('th');
      th.textContent = title;
      head.append(th);
    }
    head.append(document.createElement('th'));
    const body = table.createTBody();
    for (const r of records) {
      const row = body.insertRow();
      row.dataset.scope = r.scope;
      row.dataset.key = r.key;
      for (const [, field] of IN_FLIGHT_COLUMNS) {
        const value = typeof field === 'function' ? field(r) : r[field];
        row.insertCell().textContent = value === null || value === undefined ? '–' : String(value);
      }
      row.insertCell().append(releaseButton(r.scope, r.key));
    }
    const parts = [table];
    if (result.body.complete === false) {
      parts.push(note('Showing the first ' + records.length + '; more are in flight.', 'empty'));
    }
    out.replaceChildren(...parts);
  }

  function duration(millis) {
    if (typeof millis !== 'number') return null;
    if (millis < 1000) return millis + ' ms';
    if (millis < 120000) return (millis / 1000).toFixed(1) + ' s';
    return Math.round(millis / 60000) + ' min';
  }

  // ---- force-release -------------------------------------------------------------------------

  function releaseButton(scope, key) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'release danger';
    button.textContent = 'Force-release';
    button.addEventListener('click', () => release(scope, key, button));
    return button;
  }

  const RELEASE_RESULTS = {
    released: 'released: the next retry with this key runs afresh',
    'not-in-progress': 'not in progress: the record is finished, nothing was changed',
    absent: 'absent: there is no record for this key',
    'changed-meanwhile': 'changed meanwhile: its holder finished or renewed it; look again',
  };

  async function release(scope, key, button) {
    const sure = window.confirm(
      'Force-release key "' + key + '" in scope "' + scope + '"?\n\n'
        + 'Do this only when you know its request did nothing upstream: the next retry runs it again.',
    );
    if (!sure) return;
    button.disabled = true;
    let text;
    let kind;
    try {
      const result = await call('POST', '/admin/records/release' + query({ scope, key }));
      const outcome = result.body && result.body.result;
      if (outcome && RELEASE_RESULTS[outcome]) {
        text = RELEASE_RESULTS[outcome];
        kind = outcome === 'released' ? 'ok' : 'empty';
      } else {
        text = failure(result);
        kind = 'error';
      }
    } catch (e) {
      text = unreachable(e);
      kind = 'error';
    }
    const action = $('action-result');
    action.className = 'action-result ' + kind;
    action.textContent = 'Force-release of "' + key + '" in "' + scope + '": ' + text;
    const inline = note(text, kind);
    inline.classList.add('release-result');
    button.replaceWith(inline);
    refreshInFlight();
  }

  function note(text, kind) {
    const p = document.createElement('p');
    p.className = 'note ' + kind;
    p.textContent = text;
    return p;
  }

  // ---- wiring --------------------------------------------------------------------------------

  document.addEventListener('DOMContentLoaded', () => {
    buildCharts();
    $('login-form').addEventListener('submit', connect);
    $('disconnect').addEventListener('click', disconnect);
    $('lookup-form').addEventListener('submit', lookup);
    $('inflight-form').addEventListener('submit', refreshInFlight);
    $('token').focus();
  });
})();
