"""The HTML page's one script: the samples' filters, their rows drawn on demand and the
side-by-side view of two variants' answers to the same (case, repeat).

It reads the samples from the page's ``<script type="application/json"
id="samples-data">`` (written by :func:`evalstats.presenting._markup.json_script`)
and makes every element with ``document.createElement`` and every text with
``textContent``: no string of the data is ever parsed as HTML (the page's
Content-Security-Policy requires Trusted Types, under which ``innerHTML``
would throw). The data is columnar (see :func:`evalstats.presenting._html.samples_data`).

The URL fragment sets the view, so a view can be linked to and a test can
drive the page with ``chromium --dump-dom``: ``#samples?variant=v2&failed=1``,
``&case=NAME``, ``&tag=T``, ``&status=incomplete``, ``&check=NAME`` (samples on
which that check failed), ``&pair=CASE&repeat=3`` (the side-by-side view),
``&open=N`` (the Nth row shown, from 0, opened), ``&layout=1`` (how far right the
verdicts, the per-case table and the pass rates reach, in ``data-layout``).
The app element records how long the page took to open (``data-open-ms``,
from the navigation's start to the first rows drawn) and to apply the
fragment's filter (``data-filter-ms``).
"""

from __future__ import annotations

__all__ = ["SCRIPT"]

SCRIPT = r"""
(function () {
  "use strict";
  var app = document.getElementById("samples-app");
  var source = document.getElementById("samples-data");
  if (!app || !source) { return; }
  var D = JSON.parse(source.textContent);
  // a row: [case, variant, repeat, status, outcome, latency, reason, answer, prompt, trace,
  // checks]
  var S = D.s;
  var PAGE = 100;
  var state = {variant: -1, kase: -1, tag: -1, status: -1, check: -1, failed: false,
               pair: null, shown: PAGE};
  var matches = [];

  function h(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      if (arguments[i]) { parent.appendChild(arguments[i]); }
    }
    return parent;
  }
  function outcomeWord(o) { return o === 1 ? "passed" : (o === 0 ? "failed" : "not measured"); }
  function outcomeClass(o) { return o === 1 ? "passed" : (o === 0 ? "failed" : "muted"); }
  function seconds(x) {
    if (x === null || x === undefined) { return "–"; }
    if (x >= 1) { return x.toPrecision(3) + " s"; }
    if (x >= 1e-3) { return (1e3 * x).toPrecision(3) + " ms"; }
    return (1e6 * x).toPrecision(3) + " µs";
  }
  function count(n) { return n.toLocaleString("en-US"); }

  function select(id, label, names, all) {
    var wrap = h("label", "filter");
    wrap.appendChild(h("span", null, label));
    var s = h("select");
    s.id = id;
    var o = h("option", null, all);
    o.value = "-1";
    s.appendChild(o);
    for (var i = 0; i < names.length; i++) {
      var opt = h("option", null, names[i]);
      opt.value = String(i);
      s.appendChild(opt);
    }
    wrap.appendChild(s);
    return [wrap, s];
  }

  // --- the controls ---
  var controls = h("div", "filters");
  var fVariant = select("f-variant", "variant", D.variants, "all");
  var fCase = select("f-case", "case", D.cases, "all");
  var fTag = select("f-tag", "tag", D.tags, D.tags.length ? "all" : "none");
  var fStatus = select("f-status", "status", D.statuses, "all");
  var fCheck = select("f-check", "failed check", D.checks, "any");
  var failedBox = h("input");
  failedBox.type = "checkbox";
  failedBox.id = "f-failed";
  var failedLabel = add(h("label", "filter check"), failedBox, h("span", null, "failed only"));
  add(controls, fVariant[0], fCase[0], fTag[0], fStatus[0], fCheck[0], failedLabel);
  var status = h("p", "shown");
  status.id = "shown";
  var pairView = h("div", "pair");
  pairView.id = "pair";
  var list = h("ol", "rows");
  list.id = "rows";
  var more = h("button", "more", "show more");
  more.type = "button";
  app.textContent = "";
  add(app, controls, status, pairView, list, more);

  function fromControls() {
    state.variant = +fVariant[1].value;
    state.kase = +fCase[1].value;
    state.tag = +fTag[1].value;
    state.status = +fStatus[1].value;
    state.check = +fCheck[1].value;
    state.failed = failedBox.checked;
    state.shown = PAGE;
    apply();
    remember();
  }
  function toControls() {
    fVariant[1].value = String(state.variant);
    fCase[1].value = String(state.kase);
    fTag[1].value = String(state.tag);
    fStatus[1].value = String(state.status);
    fCheck[1].value = String(state.check);
    failedBox.checked = state.failed;
  }
  [fVariant[1], fCase[1], fTag[1], fStatus[1], fCheck[1], failedBox].forEach(function (c) {
    c.addEventListener("change", fromControls);
  });
  more.addEventListener("click", function () { state.shown += PAGE; draw(); });

  // --- filtering ---
  function checkFailed(row, ci) {
    var cs = row[10];
    for (var i = 0; i < cs.length; i++) {
      if (cs[i][0] === ci && D.checkStatuses[cs[i][1]] === "failed") { return true; }
    }
    return false;
  }
  function filter() {
    var out = [];
    var v = state.variant, c = state.kase, t = state.tag, st = state.status, ch = state.check;
    var tagged = null;
    if (t >= 0) {
      tagged = new Uint8Array(D.cases.length);
      for (var k = 0; k < D.caseTags.length; k++) {
        if (D.caseTags[k].indexOf(t) >= 0) { tagged[k] = 1; }
      }
    }
    for (var i = 0; i < S.length; i++) {
      var r = S[i];
      if (v >= 0 && r[1] !== v) { continue; }
      if (c >= 0 && r[0] !== c) { continue; }
      if (tagged && !tagged[r[0]]) { continue; }
      if (st >= 0 && r[3] !== st) { continue; }
      if (state.failed && r[4] !== 0) { continue; }
      if (ch >= 0 && !checkFailed(r, ch)) { continue; }
      out.push(i);
    }
    return out;
  }
  function apply() { matches = filter(); draw(); }

  // --- one sample ---
  function failedNames(row) {
    var names = [];
    for (var i = 0; i < row[10].length; i++) {
      if (D.checkStatuses[row[10][i][1]] === "failed") { names.push(D.checks[row[10][i][0]]); }
    }
    return names;
  }
  function block(label, text) {
    if (text === null || text === undefined || text === "") { return null; }
    var d = h("div", "block");
    add(d, h("div", "label", label), h("pre", null, text));
    return d;
  }
  function checksTable(row) {
    if (!row[10].length) { return h("p", "muted", "no checks"); }
    var t = h("table", "sample-checks");
    var head = add(h("tr"), h("th", null, "check"), h("th", null, "verdict"),
                   h("th", null, "reason"));
    add(t, add(h("thead"), head));
    var body = h("tbody");
    for (var i = 0; i < row[10].length; i++) {
      var c = row[10][i];
      var verdict = D.checkStatuses[c[1]];
      var cls = verdict === "failed" ? "failed" : (verdict === "passed" ? "passed" : "muted");
      var tr = add(h("tr"), h("td", null, D.checks[c[0]]), h("td", cls, verdict),
                   h("td", null, c[2] || "–"));
      body.appendChild(tr);
      if (c[3]) {
        var reply = h("td");
        reply.colSpan = 3;
        add(reply, h("div", "label", "the judge's reply"), h("pre", null, c[3]));
        body.appendChild(add(h("tr", "judge"), reply));
      }
    }
    return add(t, body);
  }
  function details(row) {
    var d = h("div", "details");
    add(d,
        row[6] ? h("p", "reason", row[6]) : null,
        h("p", "muted", "status " + D.statuses[row[3]] + ", latency " + seconds(row[5])),
        block("prompt sent", row[8] >= 0 ? D.prompts[row[8]] : null),
        block("answer", row[7]),
        checksTable(row),
        block("tool trace", row[9]));
    return d;
  }

  function rowItem(i) {
    var row = S[i];
    var li = h("li", "row");
    var head = h("div", "row-head");
    add(head,
        h("span", "case", D.cases[row[0]]),
        h("span", "variant", D.variants[row[1]]),
        h("span", "repeat", "repeat " + row[2]),
        h("span", "outcome " + outcomeClass(row[4]), outcomeWord(row[4])));
    if (D.statuses[row[3]] !== "completed") {
      head.appendChild(h("span", "status", D.statuses[row[3]]));
    }
    li.appendChild(head);
    var failed = failedNames(row);
    if (failed.length) {
      li.appendChild(h("div", "failed-checks", "failed: " + failed.join(", ")));
    }
    var open = h("button", "open", "details");
    open.type = "button";
    var pair = h("button", "pair-open", "side by side");
    pair.type = "button";
    var holder = h("div");
    open.addEventListener("click", function () {
      if (holder.firstChild) { holder.textContent = ""; open.textContent = "details"; }
      else { holder.appendChild(details(row)); open.textContent = "hide"; }
    });
    pair.addEventListener("click", function () {
      state.pair = [row[0], row[2]];
      drawPair();
      remember();
      pairView.scrollIntoView();
    });
    add(li, add(h("div", "row-buttons"), open, D.variants.length > 1 ? pair : null), holder);
    return li;
  }

  function draw() {
    list.textContent = "";
    var n = Math.min(state.shown, matches.length);
    var frag = document.createDocumentFragment();
    for (var k = 0; k < n; k++) { frag.appendChild(rowItem(matches[k])); }
    list.appendChild(frag);
    status.textContent = (matches.length ? "Showing 1–" + count(n) + " of " : "Showing none of ") +
      count(matches.length) + " matching samples (of " + count(S.length) + " on this page" +
      (D.total > S.length ? ", " + count(D.total) + " in the run" : "") + ").";
    more.hidden = n >= matches.length;
    drawPair();
  }

  // --- the side-by-side view ---
  var byPair = null;
  function pairIndex() {
    if (byPair) { return byPair; }
    byPair = new Map();
    for (var i = 0; i < S.length; i++) {
      var key = S[i][0] + ":" + S[i][2];
      var got = byPair.get(key);
      if (got) { got.push(i); } else { byPair.set(key, [i]); }
    }
    return byPair;
  }
  function drawPair() {
    pairView.textContent = "";
    if (!state.pair) { pairView.hidden = true; return; }
    pairView.hidden = false;
    var rows = (pairIndex().get(state.pair[0] + ":" + state.pair[1]) || []).slice();
    rows.sort(function (x, y) { return S[x][1] - S[y][1]; });
    var head = h("div", "pair-head");
    var close = h("button", "close", "close");
    close.type = "button";
    close.addEventListener("click", function () { state.pair = null; drawPair(); remember(); });
    var title = "Side by side: " + D.cases[state.pair[0]] + ", repeat " + state.pair[1];
    add(head, h("h3", null, title), close);
    pairView.appendChild(head);
    if (!rows.length) {
      pairView.appendChild(h("p", "muted", "No sample of this case and repeat."));
      return;
    }
    var grid = h("div", "pair-grid");
    for (var k = 0; k < rows.length; k++) {
      var row = S[rows[k]];
      var col = h("div", "side");
      var role = k === 0 ? " (A)" : (k === 1 ? " (B)" : "");
      add(col, add(h("div", "side-head"),
                   h("strong", "variant", D.variants[row[1]] + role),
                   h("span", "outcome " + outcomeClass(row[4]), outcomeWord(row[4]))),
          details(row));
      grid.appendChild(col);
    }
    pairView.appendChild(grid);
  }

  // --- the fragment: a view one can link to, and the tests' hook ---
  function named(list, name) {
    if (name === null) { return -1; }
    var i = list.indexOf(name);
    return i;
  }
  function fromHash() {
    var hash = location.hash;
    if (hash.indexOf("#samples?") !== 0) { return false; }
    var q = new URLSearchParams(hash.slice(9));
    state.variant = named(D.variants, q.get("variant"));
    state.kase = named(D.cases, q.get("case"));
    state.tag = named(D.tags, q.get("tag"));
    state.status = named(D.statuses, q.get("status"));
    state.check = named(D.checks, q.get("check"));
    state.failed = q.get("failed") === "1";
    state.shown = PAGE;
    var pc = named(D.cases, q.get("pair"));
    state.pair = pc >= 0 ? [pc, parseInt(q.get("repeat") || "0", 10)] : null;
    toControls();
    apply();
    if (q.get("layout") === "1") { measure(); }
    var open = q.get("open");
    if (open !== null) {
      var b = list.querySelectorAll("button.open")[parseInt(open, 10)];
      if (b) { b.click(); }
    }
    return true;
  }
  function measure() {
    // How far right the verdicts, the per-case table and the pass rates reach (a table
    // that scrolls in its own box counts as its box), against the viewport.
    var out = ["viewport " + document.documentElement.clientWidth,
               "page " + document.documentElement.scrollWidth];
    ["verdict", "per-case", "rates"].forEach(function (id) {
      var e = document.getElementById(id);
      if (!e) { return; }
      var right = e.getBoundingClientRect().right;
      e.querySelectorAll("*").forEach(function (c) {
        if (!c.closest(".scroll")) { right = Math.max(right, c.getBoundingClientRect().right); }
      });
      out.push(id + " " + Math.ceil(right));
    });
    app.setAttribute("data-layout", out.join("; "));
  }
  function remember() {
    var q = new URLSearchParams();
    if (state.variant >= 0) { q.set("variant", D.variants[state.variant]); }
    if (state.kase >= 0) { q.set("case", D.cases[state.kase]); }
    if (state.tag >= 0) { q.set("tag", D.tags[state.tag]); }
    if (state.status >= 0) { q.set("status", D.statuses[state.status]); }
    if (state.check >= 0) { q.set("check", D.checks[state.check]); }
    if (state.failed) { q.set("failed", "1"); }
    if (state.pair) {
      q.set("pair", D.cases[state.pair[0]]);
      q.set("repeat", String(state.pair[1]));
    }
    try {
      history.replaceState(null, "", "#samples?" + q.toString());
    } catch (e) { /* a page opened some other way may refuse it */ }
  }

  apply();
  app.setAttribute("data-open-ms", performance.now().toFixed(1));
  var t = performance.now();
  if (fromHash()) { app.setAttribute("data-filter-ms", (performance.now() - t).toFixed(1)); }
  window.addEventListener("hashchange", fromHash);
})();
"""
