// vramwatch live page: polls the daemon's JSON API and draws a card per GPU with an SVG chart of
// its recent memory, the process table, the findings, the firing alerts and the status notes.
// No libraries, no network access beyond the daemon that served this page.
(function () {
  'use strict';

  var STATUS_EVERY_MS = 5000;     // from the end of one status poll to the start of the next
  var HISTORY_EVERY_MS = 15000;
  var ANSWER_WITHIN_MS = 10000;   // a request with no answer by then is given up (the daemon is unreachable)
  var HISTORY_HOURS = 6;
  var GiB = 1024 * 1024 * 1024, MiB = 1024 * 1024;

  // Times of the daemon's clock (lastOk, downSince: ms since the epoch) come from its status
  // document's `time`: the browser's clock may be off by hours, and history asked for over the
  // browser's last six hours would miss the daemon's. clockOffset is how far ahead the daemon's
  // clock was of the browser's at the last status (ms); historyAt is the browser's own clock.
  var state = {status: null, lastOk: null, downSince: null, error: '', history: {}, historyError: {}, historyAt: 0,
               historyOff: '', showAll: {}, clockOffset: 0, written: {}};

  // ---- formatting ----
  function esc(v) {
    return String(v == null ? '' : v).replace(/[&<>"']/g, function (c) {
      return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c];
    });
  }
  function num(v) { return typeof v === 'number' && isFinite(v); }
  function bytes(b) {
    if (!num(b)) return '—';
    if (Math.abs(b) >= GiB) return (b / GiB).toFixed(1) + ' GiB';
    return Math.round(b / MiB) + ' MiB';
  }
  // The daemon's rule for rates (FormatRate in core/units.cpp), so the card says what the alerts
  // and the evidence beside it say: GiB/h from 10 GiB/h, whole MiB/h from 10 MiB/h, else a tenth.
  function rate(bps) {
    if (!num(bps)) return '—';
    var h = bps * 3600, sign = h >= 0 ? '+' : '-';
    h = Math.abs(h);
    if (h >= 10 * GiB) return sign + (h / GiB).toFixed(1) + ' GiB/h';
    return sign + (h / MiB).toFixed(h >= 10 * MiB ? 0 : 1) + ' MiB/h';
  }
  function duration(s) {
    if (!num(s)) return '—';
    s = Math.max(0, Math.round(s));
    var d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    if (d > 0) return d + 'd ' + h + 'h';
    if (h > 0) return h + 'h ' + m + 'm';
    if (m > 0) return m + 'm ' + (s % 60) + 's';
    return s + 's';
  }
  // Clock times are UTC, whatever the browser's zone, as the daemon's evidence writes them
  // ("Growing since 2026-11-30 02:15 UTC"): hhmm() for axis ticks under a "time (UTC)" title,
  // clock() with the zone mark for text that stands alone.
  function pad2(n) { return (n < 10 ? '0' : '') + n; }
  function hhmm(t, withSeconds) {
    var d = new Date(t * 1000);
    return pad2(d.getUTCHours()) + ':' + pad2(d.getUTCMinutes()) + (withSeconds ? ':' + pad2(d.getUTCSeconds()) : '');
  }
  function clock(t, withSeconds) { return hhmm(t, withSeconds) + ' UTC'; }
  function utcDate(t) {
    var d = new Date(t * 1000);
    return d.getUTCFullYear() + '-' + pad2(d.getUTCMonth() + 1) + '-' + pad2(d.getUTCDate());
  }
  // An alert's `since`: ISO 8601 UTC from the live daemon ("2026-11-30T03:22:27.111Z") becomes
  // "2026-11-30 03:22 UTC"; anything else (a replayed trace's offset "t+2h 11m 50s") as written.
  function sinceText(since, withSeconds) {
    var m = /^\d{4}-\d\d-\d\dT[0-9:.]+Z$/.test(since || '') ? Date.parse(since) : NaN;
    return isFinite(m) ? utcDate(m / 1000) + ' ' + clock(m / 1000, withSeconds) : String(since == null ? '' : since);
  }
  // The daemon's clock now (ms since the epoch), as far as its last status tells.
  function daemonNow() { return Date.now() + state.clockOffset; }
  // ", 42 s ago" from an ISO 8601 UTC time to the status document's own time (its clock, not the
  // browser's); empty when either is unknown.
  function ageText(iso) {
    var at = Date.parse(iso || ''), now = Date.parse((state.status && state.status.time) || '');
    if (!isFinite(at) || !isFinite(now) || now < at) return '';
    return ', ' + duration((now - at) / 1000) + ' ago';
  }

  // ---- data ----
  // An error answer: its HTTP status and its own words ({"error": "history is off (start the
  // daemon with --db PATH)"}) when it has them; `status` and `why` on the error. A request not
  // answered within ANSWER_WITHIN_MS is aborted and fails ("no answer within 10 s"): a daemon
  // that accepts and never answers is unreachable, not "live" with an old update time.
  function getJson(url) {
    var ctl = typeof AbortController === 'function' ? new AbortController() : null, timer = null;
    var late = new Promise(function (resolve, reject) {
      timer = setTimeout(function () {
        if (ctl) ctl.abort();
        reject(new Error('no answer within ' + ANSWER_WITHIN_MS / 1000 + ' s'));
      }, ANSWER_WITHIN_MS);
    });
    var answer = fetch(url, {cache: 'no-store', signal: ctl ? ctl.signal : undefined}).then(function (r) {
      if (r.ok) return r.json();
      return r.json().then(function (body) { return body && body.error ? String(body.error) : ''; },
                           function () { return ''; }).then(function (why) {
        var e = new Error('HTTP ' + r.status + (why ? ': ' + why : ''));
        e.status = r.status;
        e.why = why;
        throw e;
      });
    });
    return Promise.race([answer, late]).then(function (v) { clearTimeout(timer); return v; },
                                              function (e) { clearTimeout(timer); throw e; });
  }
  function capacityOf(g, hist) {
    var total = num(g.memory_total_bytes) ? g.memory_total_bytes : (hist && num(hist.total_bytes) ? hist.total_bytes : null);
    if (total == null) return null;
    return total - (num(g.memory_reserved_bytes) ? g.memory_reserved_bytes : 0);
  }

  // ---- chart: our own SVG, same classes as the report's charts ----
  var TIME_STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
  function niceStep(span, maxIntervals) {
    var raw = span / maxIntervals, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var ms = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < ms.length; i++) if (ms[i] * mag >= raw * (1 - 1e-9)) return ms[i] * mag;
    return 10 * mag;
  }
  // The width a chart is drawn at: the width it is shown at, 280 to 560 px, so that in a narrow
  // window its 11 px text stays 11 px instead of shrinking with a scaled-down drawing (wider boxes
  // scale the 560 px drawing up).
  function chartWidth() {
    var box = document.querySelector('.vw-chart-box'), gpus = document.getElementById('vw-gpus');
    var w = box ? box.clientWidth : (gpus ? gpus.clientWidth - 30 : 0);  // a card's padding and border: 30 px
    return w > 0 ? Math.max(280, Math.min(560, Math.floor(w))) : 560;
  }
  // What a chart says, in words, for a screen reader (its aria-label), as the report's chart title
  // says it: the GPU, the verdict, the leak rate and when memory runs out. `now`: the time the
  // runway counts from (epoch seconds), or nothing.
  function chartLabel(g, now) {
    var a = g.analysis || {}, verdict = a.verdict || 'unknown';
    var out = 'GPU ' + g.index + (g.name ? ' · ' + g.name : '') + ' memory: ' + verdict.replace('_', ' ');
    if (verdict === 'leak') {
      if (num(a.leak_rate_bytes_per_second)) out += ' at ' + rate(a.leak_rate_bytes_per_second);
      if (num(a.time_to_oom_seconds)) {
        out += ', OOM ' + (num(now) ? clock(now + a.time_to_oom_seconds) + ' ' : '') + '(in ' +
            duration(a.time_to_oom_seconds) + ')';
      }
    } else if (num(a.load_rise_bytes_per_second)) {
      out += '; worth watching: with the load\'s cycle removed it rose at ' + rate(a.load_rise_bytes_per_second);
    }
    return out;
  }
  function chart(g, hist) {
    var W = chartWidth(), H = 244, L = 56, R = 12, T = 10, B = 40;
    var pts = hist && hist.points ? hist.points.filter(function (p) { return num(p[0]) && num(p[1]); }) : [];
    var labelNow = pts.length ? pts[pts.length - 1][0] : (state.lastOk != null ? state.lastOk / 1000 : null);
    var head = '<svg class="vw-chart" data-gpu="' + esc(g.index) + '" viewBox="0 0 ' + W + ' ' + H + '" role="img"' +
        ' aria-label="' + esc(chartLabel(g, labelNow)) + '">';
    if (pts.length < 2) {
      var why = state.historyOff ? state.historyOff :
        state.historyError[g.index] ? 'history unavailable: ' + state.historyError[g.index] : 'collecting history…';
      return head + '<rect class="vw-bg" width="' + W + '" height="' + H + '"/><text class="vw-tick" x="' + W / 2 +
          '" y="' + H / 2 + '" text-anchor="middle" data-role="no-history">' + esc(why) + '</text></svg>';
    }
    var a = g.analysis || {}, cap = capacityOf(g, hist);
    var floor = hist.floor ? hist.floor.filter(function (p) { return num(p[0]) && num(p[1]); }) : [];
    // The time axis spans every line drawn: the daemon places a floor point at the middle of its
    // minute, which can be before the first raw sample or after the last.
    var t0 = pts[0][0], t1 = pts[pts.length - 1][0], now = t1;
    floor.forEach(function (p) { t0 = Math.min(t0, p[0]); t1 = Math.max(t1, p[0]); });
    var span = Math.max(60, t1 - t0), tHi = t1 + 0.02 * span;
    var oomT = null, beyond = false, start = null;
    if (a.verdict === 'leak' && num(a.time_to_oom_seconds) && cap != null) {
      oomT = now + a.time_to_oom_seconds;
      var lastUsed = pts[pts.length - 1][1];
      start = [now, num(a.peak_bytes) ? a.peak_bytes : lastUsed];
      if (oomT <= t1 + 3 * span) tHi = oomT + 0.04 * (oomT - t0); else { beyond = true; tHi = t1 + 0.15 * span; }
    }
    var yMax = 0;
    pts.concat(floor).forEach(function (p) { yMax = Math.max(yMax, p[1]); });
    if (cap != null) yMax = Math.max(yMax, cap);
    if (num(g.memory_total_bytes)) yMax = Math.max(yMax, g.memory_total_bytes);
    yMax = yMax > 0 ? yMax * 1.10 : GiB;
    var pw = W - L - R, ph = H - T - B;
    function x(t) { return L + (t - t0) / (tHi - t0) * pw; }
    function y(v) { return T + ph - v / yMax * ph; }
    function line(list) {
      return list.map(function (p) { return x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1); }).join(' ');
    }
    // A path through the points that lifts the pen over a gap in the data (no point for over five
    // times the median step, and over a minute), as the analyze report's charts do: hours without
    // samples are not drawn as a line across them.
    // A gap in a line: five times its median step, a minute at least.
    function gapOf(list) {
      var steps = [];
      for (var k = 1; k < list.length; k++) if (list[k][0] > list[k - 1][0]) steps.push(list[k][0] - list[k - 1][0]);
      steps.sort(function (u, w) { return u - w; });
      return steps.length ? Math.max(5 * steps[Math.floor(steps.length / 2)], 60) : Infinity;
    }
    function lifted(list, k, gap) { return k === 0 || list[k][0] - list[k - 1][0] > gap; }
    function alone(list, k, gap) { return lifted(list, k, gap) && (k + 1 === list.length || lifted(list, k + 1, gap)); }
    // The line, its pen lifted over gaps; a point alone between gaps is a dot (dots()), as in the
    // reports of `analyze`.
    function path(list) {
      var gap = gapOf(list), out = [];
      list.forEach(function (p, k) {
        if (alone(list, k, gap)) return;
        out.push((lifted(list, k, gap) ? 'M' : 'L') + x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1));
      });
      return out.join(' ');
    }
    function dots(list, role) {
      var gap = gapOf(list), out = '';
      list.forEach(function (p, k) {
        if (!alone(list, k, gap)) return;
        out += '<circle class="vw-dot vw-dot-' + role + '" data-role="' + role + '-dot" cx="' + x(p[0]).toFixed(1) +
            '" cy="' + y(p[1]).toFixed(1) + '" r="2.5"/>';
      });
      return out;
    }
    var s = head + '<rect class="vw-bg" width="' + W + '" height="' + H + '"/>';
    var unit = yMax >= GiB ? GiB : MiB, uname = unit === GiB ? ' GiB' : ' MiB';
    var ys = niceStep(yMax / unit, 4), dec = ys % 1 === 0 ? 0 : (ys * 10 % 1 === 0 ? 1 : 2);
    for (var v = 0; v * unit <= yMax; v += ys) {
      var yy = y(v * unit).toFixed(1);
      s += '<line class="vw-grid" x1="' + L + '" x2="' + (W - R) + '" y1="' + yy + '" y2="' + yy + '"/>' +
          '<text class="vw-tick" x="' + (L - 6) + '" y="' + (+yy + 4) + '" text-anchor="end">' + v.toFixed(dec) + uname + '</text>';
    }
    var tStep = TIME_STEPS[TIME_STEPS.length - 1];
    for (var i = 0; i < TIME_STEPS.length; i++) if ((tHi - t0) / TIME_STEPS[i] <= pw / 75) { tStep = TIME_STEPS[i]; break; }
    // Ticks on whole UTC steps, labelled in UTC; the axis title names the zone and the date.
    for (var tt = Math.ceil(t0 / tStep) * tStep; tt <= tHi; tt += tStep) {
      var xx = x(tt);
      if (xx < L + 14 || xx > W - 16) continue;
      s += '<line class="vw-grid" x1="' + xx.toFixed(1) + '" x2="' + xx.toFixed(1) + '" y1="' + T + '" y2="' + (T + ph) + '"/>' +
          '<text class="vw-tick" data-role="xtick" data-t="' + Math.round(tt) + '" x="' + xx.toFixed(1) + '" y="' +
          (T + ph + 16) + '" text-anchor="middle">' + hhmm(tt, tStep < 60) + '</text>';
    }
    s += '<text class="vw-tick vw-axis-title" data-role="xtitle" x="' + (L + pw / 2).toFixed(1) + '" y="' + (H - 6) +
        '" text-anchor="middle">time (UTC) · ' + utcDate(t1) + '</text>';
    s += '<line class="vw-axis" x1="' + L + '" x2="' + (W - R) + '" y1="' + (T + ph) + '" y2="' + (T + ph) + '"/>';
    s += '<path class="vw-raw" data-role="raw" d="' + path(pts) + '"/>' + dots(pts, 'raw');
    if (floor.length > 1) s += '<path class="vw-floor" data-role="floor" d="' + path(floor) + '"/>' + dots(floor, 'floor');
    if (cap != null) {
      var cy = y(cap).toFixed(1);
      s += '<line class="vw-capacity" data-role="capacity" x1="' + L + '" x2="' + (W - R) + '" y1="' + cy + '" y2="' + cy + '"/>' +
          '<text class="vw-label" x="' + (L + 4) + '" y="' + (cy - 5) + '">capacity ' + bytes(cap) + '</text>';
    }
    if (oomT != null) {
      var endT = Math.min(oomT, tHi), endV = start[1] + (cap - start[1]) * (endT - t1) / (oomT - t1 || 1);
      s += '<polyline class="vw-projection" data-role="projection" points="' + line([start, [endT, endV]]) + '"/>';
      var label = 'OOM ' + clock(oomT) + ' (in ' + duration(a.time_to_oom_seconds) + ')';
      if (!beyond) {
        var ox = x(oomT).toFixed(1), oy = y(cap).toFixed(1), left = x(oomT) > W / 2;
        s += '<line class="vw-oom-drop" x1="' + ox + '" x2="' + ox + '" y1="' + oy + '" y2="' + (T + ph) + '"/>' +
            '<circle class="vw-oom-dot" data-role="oom" data-t="' + Math.round(oomT) + '" cx="' + ox + '" cy="' + oy + '" r="5"/>' +
            '<text class="vw-label vw-label-oom" x="' + (left ? +ox - 8 : +ox + 8) + '" y="' + (+oy + 16) + '" text-anchor="' +
            (left ? 'end' : 'start') + '">' + esc(label) + '</text>';
      } else {
        var ry = y(cap);
        s += '<path class="vw-oom-dot" data-role="oom" data-beyond="true" data-t="' + Math.round(oomT) + '" d="M' + (W - R) + ' ' +
            ry.toFixed(1) + ' l-9 -6 v12 z"/><text class="vw-label vw-label-beyond" x="' + (W - R - 4) + '" y="' + (ry + 18).toFixed(1) +
            '" text-anchor="end">OOM in ' + esc(duration(a.time_to_oom_seconds)) + ' →</text>';
      }
    }
    return s + '</svg>';
  }

  // ---- cards, tables ----
  var STATE_NAMES = {R: 'running', S: 'sleeping', D: 'stuck in the driver (D)', Z: 'zombie', T: 'stopped', gone: 'process gone'};
  // A holder's flags are the findings about its PID on this GPU, by kind ("idle_holder" → "idle");
  // a finding's gpu is the GPU's index or its UUID.
  function flagsOf(g, pid) {
    var out = [];
    ((state.status && state.status.findings) || []).forEach(function (f) {
      if (f.pid == null || f.pid !== pid || (f.gpu !== String(g.index) && f.gpu !== g.uuid)) return;
      var name = String(f.kind).replace(/_holder$/, '');
      if (out.indexOf(name) < 0) out.push(name);
    });
    return out;
  }
  // Column headers, each naming its column for assistive technology.
  function heads(names) {
    return names.map(function (n) { return '<th scope="col">' + esc(n) + '</th>'; }).join('');
  }
  // A GPU with many processes (hundreds of small jobs) shows its largest PROCESS_ROWS first and a
  // row that shows the rest on a click (kept across refreshes).
  var PROCESS_ROWS = 20;
  function processRows(g) {
    var procs = g.processes || [];
    if (!procs.length && g.stale) return '<p class="vw-note">The processes of this GPU cannot be listed now.</p>';
    if (!procs.length) return '<p class="vw-note">No process holds memory on this GPU.</p>';
    var hidden = 0;
    if (procs.length > PROCESS_ROWS && !state.showAll[g.index]) {
      procs = procs.slice().sort(function (u, w) {
        return (num(w.used_bytes) ? w.used_bytes : -1) - (num(u.used_bytes) ? u.used_bytes : -1);
      });
      hidden = procs.length - PROCESS_ROWS;
      procs = procs.slice(0, PROCESS_ROWS);
    }
    var rows = procs.map(function (p) {
      // Short ids as the check table shows them; the full ones in the tooltip.
      // Kubernetes names when the daemon read them (--kube-logs), else the cgroup's IDs.
      var ctr = p.container_name || (p.container_id ? p.container_id.slice(0, 12) : '');
      var pod = p.pod_name ? p.pod_namespace + '/' + p.pod_name : (p.pod_uid ? p.pod_uid.slice(0, 8) : '');
      var where = [ctr ? 'ctr ' + ctr : '', pod ? 'pod ' + pod : '', p.slurm_job ? 'job ' + p.slurm_job : '']
          .filter(Boolean).join(' · ');
      var whereFull = [p.container_id ? 'container ' + p.container_id : '', p.pod_uid ? 'pod ' + p.pod_uid : '',
                       p.slurm_job ? 'Slurm job ' + p.slurm_job : ''].filter(Boolean).join('\n');
      var flags = flagsOf(g, p.pid).map(function (f) { return '<span class="vw-flag" data-flag="' + esc(f) + '">' + esc(f) + '</span>'; });
      return '<tr data-pid="' + esc(p.pid) + '" data-state="' + esc(p.state) + '">' +
          '<td class="num">' + esc(p.pid) + (p.container_pid != null ? ' <span class="vw-muted">(' + esc(p.container_pid) + ')</span>' : '') +
          '</td><td>' + esc(p.user || '—') + '</td>' +
          '<td><span class="vw-state vw-state-' + esc(p.state) + '" title="' + esc(STATE_NAMES[p.state] || p.state) + '">' +
          esc(p.state || '?') + '</span>' + flags.join('') + '</td>' +
          '<td class="num">' + bytes(p.used_bytes) + '</td>' +
          '<td class="num">' + (num(p.sm_util_ratio) ? Math.round(p.sm_util_ratio * 100) + ' %' : '—') + '</td>' +
          '<td class="cmd" title="' + esc(p.command) + '"><div>' + esc(p.command || '—') + '</div>' +
          (where ? '<div class="vw-where" data-role="where" title="' + esc(whereFull) + '">' + esc(where) + '</div>' : '') + '</td></tr>';
    });
    // Focusable from script only (tabindex -1): "show all" hands keyboard focus to it (the button
    // goes away with the click).
    return '<div class="vw-scroll"><table class="vw-procs" data-role="processes" tabindex="-1" aria-label="Processes on GPU ' +
        esc(g.index) + '"><thead><tr>' +
        heads(['PID', 'User', 'State', 'Memory', 'SM', 'Command · container']) + '</tr></thead><tbody>' + rows.join('') +
        (hidden ? '<tr><td colspan="6"><button type="button" class="vw-more" data-role="show-all" data-gpu="' +
                  esc(g.index) + '">… and ' + hidden + ' more (the largest ' + PROCESS_ROWS + ' are shown): show all</button></td></tr>'
                : '') +
        '</tbody></table></div>';
  }
  function card(g) {
    var a = g.analysis || {}, verdict = a.verdict || 'unknown', hist = state.history[g.index];
    // A GPU whose memory the latest sample could not read (lost, its calls hang or fail): its
    // numbers are the last ones read, and the card says so instead of showing them as current.
    var stale = !!g.stale, lostGpu = !!g.lost;
    var staleText = !stale ? '' : (lostGpu ? 'GPU lost (NVML: GPU_IS_LOST)' : 'NVML does not answer for this GPU') +
        (g.sampled_at ? '; the values below were read at ' + sinceText(g.sampled_at, true) + ageText(g.sampled_at)
                      : '; nothing has been read from it yet');
    var total = g.memory_total_bytes, used = g.memory_used_bytes;
    var pct = num(total) && num(used) && total > 0 ? Math.min(100, used / total * 100) : 0;
    var usage = bytes(used) + ' of ' + bytes(total) + ' used (' + pct.toFixed(0) + ' %)';
    var floorPct = num(total) && num(a.floor_bytes) && total > 0 ? Math.min(100, a.floor_bytes / total * 100) : null;
    var runway = a.verdict === 'leak' && num(a.time_to_oom_seconds) ? duration(a.time_to_oom_seconds) : (a.verdict === 'leak' ? '?' : '—');
    // No leak verdict, but a swinging load's memory rose with its cycle removed: worth watching.
    var watch = a.verdict !== 'leak' && num(a.load_rise_bytes_per_second);
    return '<article class="vw-card" data-gpu="' + esc(g.index) + '" data-verdict="' + esc(verdict) + '"><header>' +
        '<h2 title="' + esc(g.uuid) + '">GPU ' + esc(g.index) + ' · ' + esc(g.name || '') + '</h2>' +
        (stale ? '<span class="vw-badge vw-sev-critical" data-role="stale">' + (lostGpu ? 'lost' : 'stale') + '</span> ' : '') +
        '<span class="vw-badge vw-badge-' + esc(verdict) + '" data-role="verdict">' + esc(verdict.replace('_', ' ')) + '</span></header>' +
        (stale ? '<p class="vw-note vw-alarm" data-role="stale-note">' + esc(staleText) + '</p>' : '') +
        '<div class="vw-bar" role="meter" aria-label="GPU ' + esc(g.index) + ' memory used" aria-valuemin="0"' +
        ' aria-valuemax="100" aria-valuenow="' + pct.toFixed(0) + '" aria-valuetext="' + esc(usage) + '">' +
        '<span class="vw-bar-used" style="width:' + pct.toFixed(1) + '%"></span>' +
        (floorPct != null ? '<span class="vw-bar-floor" title="floor" style="left:' + floorPct.toFixed(1) + '%"></span>' : '') + '</div>' +
        '<div class="vw-usage-text" data-role="usage">' + usage + '</div>' +
        '<dl class="vw-stats"><div><dt>Leak rate</dt><dd data-role="rate"' + (a.verdict === 'leak' ? ' class="vw-alarm"' :
            watch ? ' class="vw-watch" title="Worth watching: with the load&#39;s cycle removed its memory rose at this rate; not yet a leak verdict"' : '') + '>' +
        (a.verdict === 'leak' ? rate(a.leak_rate_bytes_per_second) : watch ? 'watch ' + rate(a.load_rise_bytes_per_second) : '—') + '</dd></div>' +
        '<div><dt>Runway</dt><dd data-role="runway"' + (a.verdict === 'leak' ? ' class="vw-alarm"' : '') + '>' + runway + '</dd></div>' +
        '<div><dt>Floor</dt><dd>' + bytes(a.floor_bytes) + '</dd></div><div><dt>Peak</dt><dd>' + bytes(a.peak_bytes) + '</dd></div></dl>' +
        '<div class="vw-chart-box" data-role="chart">' + chart(g, hist) + '</div>' + processRows(g) + '</article>';
  }
  function findings(list) {
    var el = document.getElementById('vw-findings');
    el.hidden = !list.length;
    if (!list.length) { write(el, ''); return; }
    // A finding of the host, not of one GPU (its gpu is empty), shows a dash in the GPU column.
    write(el, '<h2>Findings</h2><div class="vw-scroll"><table class="vw-stack"><thead><tr>' +
        heads(['Severity', 'Kind', 'GPU', 'PID', 'Memory', 'What', 'Next step']) + '</tr></thead><tbody>' + list.map(function (f) {
          return '<tr data-role="finding" data-kind="' + esc(f.kind) + '"><td><span class="vw-badge vw-sev-' + esc(f.severity) + '">' +
              esc(f.severity) + '</span></td><td>' + esc(f.kind) + '</td><td>' + esc(f.gpu == null || f.gpu === '' ? '—' : f.gpu) + '</td><td class="num">' +
              esc(f.pid == null ? '—' : f.pid) + '</td><td class="num">' + bytes(f.bytes) + '</td><td class="vw-text">' + esc(f.message) +
              '</td><td class="vw-text" data-label="Next step">' + esc(f.action || '') + '</td></tr>';
        }).join('') + '</tbody></table></div>');
  }
  // The status document's `notes`: what the daemon cannot see or judge (e.g. an unreadable kernel log).
  function notes(list) {
    var el = document.getElementById('vw-notes');
    el.hidden = !list.length;
    write(el, list.length ? '<h2>Notes</h2><ul>' + list.map(function (n) {
      return '<li data-role="note">' + esc(n) + '</li>';
    }).join('') + '</ul>' : '');
  }
  function alerts(list) {
    var el = document.getElementById('vw-alerts');
    var firing = list.filter(function (x) { return x.state === 'firing'; });
    el.hidden = !firing.length;
    write(el, firing.length ? '<h2>Alerts firing</h2><div class="vw-scroll"><table class="vw-stack"><thead><tr>' +
        heads(['Severity', 'Alert', 'GPU', 'Since', 'Summary']) + '</tr></thead><tbody>' + firing.map(function (x) {
      var sev = x.severity === 'critical' || x.severity === 'warning' ? x.severity : 'critical';
      return '<tr data-role="alert" data-name="' + esc(x.name) + '" data-severity="' + esc(sev) + '"><td>' +
          '<span class="vw-badge vw-sev-' + sev + '" data-role="severity">' + esc(sev) +
          '</span></td><td><b>' + esc(x.name) + '</b></td><td>' + (x.gpu ? 'GPU ' + esc(x.gpu) : 'host') +
          '</td><td class="vw-muted vw-nowrap" data-role="since">since ' +
          esc(sinceText(x.since)) + '</td><td class="vw-text">' + esc(x.summary) + '</td></tr>';
    }).join('') + '</tbody></table></div>' : '');
  }

  // ---- writing the page ----
  // Puts `html` into `el`, changing only what differs from what is there, so that a refresh every
  // 5 s leaves the reader's place alone: a panel whose markup is what was last written is not
  // touched; otherwise each element whose tag, key and place stay is kept (its attributes and
  // text brought up to date), and with it keyboard focus on a button, a text selection in a table
  // and a table scrolled sideways. Only elements that are new or changed their kind are replaced.
  function write(el, html) {
    if (state.written[el.id] === html) return;
    state.written[el.id] = html;
    var next = document.createElement(el.tagName);
    next.innerHTML = html;
    patchChildren(el, next);
  }
  // An element's key: a card, a row or a button is the same one when its GPU, PID and role are.
  function keyOf(n) {
    if (n.nodeType !== 1) return '';
    return [n.id, n.getAttribute('data-gpu'), n.getAttribute('data-pid'), n.getAttribute('data-role'),
            n.getAttribute('data-name'), n.getAttribute('data-kind')].join('|');
  }
  function patchChildren(cur, next) {
    var want = Array.prototype.slice.call(next.childNodes);
    want.forEach(function (w, i) {
      var have = cur.childNodes[i];
      if (!have) {
        cur.appendChild(w);
      } else if (have.nodeType !== w.nodeType || have.nodeName !== w.nodeName || keyOf(have) !== keyOf(w)) {
        cur.replaceChild(w, have);
      } else if (have.nodeType !== 1) {
        if (have.nodeValue !== w.nodeValue) have.nodeValue = w.nodeValue;
      } else {
        patchAttributes(have, w);
        patchChildren(have, w);
      }
    });
    while (cur.childNodes.length > want.length) cur.removeChild(cur.lastChild);
  }
  function patchAttributes(have, w) {
    var i, a;
    for (i = have.attributes.length - 1; i >= 0; i--) {
      if (!w.hasAttribute(have.attributes[i].name)) have.removeAttribute(have.attributes[i].name);
    }
    for (i = 0; i < w.attributes.length; i++) {
      a = w.attributes[i];
      if (have.getAttribute(a.name) !== a.value) have.setAttribute(a.name, a.value);
    }
  }

  function render() {
    var st = state.status, conn = document.getElementById('vw-conn');
    // The contact line is a polite live region: a screen reader says "daemon unreachable" when it
    // happens and "live" when it is back, not the updated time every 5 s (aria-live="off").
    if (state.downSince != null) {
      conn.dataset.state = 'down';
      write(conn, esc('daemon unreachable (' + state.error + ') since ' + clock(state.downSince / 1000, true) +
          (state.lastOk ? ' · showing data from ' + clock(state.lastOk / 1000, true) : ' · no data yet') + ' · retrying'));
      document.body.classList.toggle('vw-stale', !!st);
    } else if (st) {
      conn.dataset.state = 'ok';
      write(conn, 'live · <span aria-live="off">updated ' + clock(state.lastOk / 1000, true) + '</span>');
      document.body.classList.remove('vw-stale');
    }
    if (!st) return;
    var host = st.host || {};
    var hostText = [host.hostname, host.driver_version ? 'driver ' + host.driver_version : ''].filter(Boolean).join(' · ');
    write(document.getElementById('vw-host'), esc(hostText));
    document.title = host.hostname ? 'vramwatch · ' + host.hostname : 'vramwatch';
    alerts(st.alerts || []);
    findings(st.findings || []);
    notes(st.notes || []);
    var gpus = st.gpus || [];
    write(document.getElementById('vw-gpus'), gpus.length ? gpus.map(card).join('') :
        '<p class="vw-panel">The daemon sees no GPU.</p>');
  }

  function pollHistory() {
    var st = state.status;
    if (!st || !st.gpus || state.historyOff) return Promise.resolve();
    // A daemon without --db says so in its status: nothing to ask for, no request that fails.
    if (st.host && st.host.history_kept === false) {
      state.historyOff = 'history is off (start the daemon with --db PATH)';
      return Promise.resolve().then(render);
    }
    // The daemon's last six hours, by its clock, whatever the browser's says.
    var now = daemonNow(), from = new Date(now - HISTORY_HOURS * 3600 * 1000).toISOString(), to = new Date(now).toISOString();
    state.historyAt = Date.now();
    return Promise.all(st.gpus.map(function (g) {
      var url = '/api/v1/history?series=gpu:' + encodeURIComponent(g.index) + '&from=' + encodeURIComponent(from) +
          '&to=' + encodeURIComponent(to);
      return getJson(url).then(function (h) { state.history[g.index] = h; delete state.historyError[g.index]; },
          function (e) {
            // A daemon without --db keeps no history: said once, not asked again.
            if (e.status === 404 && /history is off/.test(e.why || '')) state.historyOff = e.why;
            else state.historyError[g.index] = e.message;
          });
    })).then(render);
  }
  function pollStatus() {
    return getJson('/api/v1/status').then(function (st) {
      var first = !state.status, at = Date.parse((st && st.time) || '');
      state.status = st;
      // The daemon's clock where its status says it (a daemon that does not: the browser's).
      state.clockOffset = isFinite(at) ? at - Date.now() : 0;
      state.lastOk = daemonNow();
      state.downSince = null;
      render();
      if (first || Date.now() - state.historyAt >= HISTORY_EVERY_MS) return pollHistory();
    }, function (e) {
      if (state.downSince == null) state.downSince = daemonNow();
      state.error = e.message || 'no answer';
      render();
    });
  }
  document.addEventListener('click', function (ev) {
    var b = ev.target && ev.target.closest ? ev.target.closest('[data-role=show-all]') : null;
    if (!b) return;
    var gpu = b.getAttribute('data-gpu');
    state.showAll[gpu] = true;
    render();
    // The button is gone: focus goes to the table it opened, not back to the page's start.
    var table = document.querySelector('article[data-gpu="' + CSS.escape(gpu) + '"] [data-role=processes]');
    if (table) table.focus();
  });
  // A window made narrower or wider redraws the charts at their new width (chartWidth).
  var resizeQueued = false;
  window.addEventListener('resize', function () {
    if (resizeQueued) return;
    resizeQueued = true;
    requestAnimationFrame(function () { resizeQueued = false; render(); });
  });
  // One poll at a time: the next starts STATUS_EVERY_MS after the last ended (answered, failed or
  // given up), so a slow daemon is never sent a pile of requests that each hold one of its threads.
  function loop() {
    pollStatus().then(null, function (e) { state.error = (e && e.message) || 'page error'; })
        .then(function () { setTimeout(loop, STATUS_EVERY_MS); });
  }
  loop();
})();
