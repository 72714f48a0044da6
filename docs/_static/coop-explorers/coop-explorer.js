/* cuda.coop interactive explorers.
 *
 * One renderer for every family: the data (window.CoopExplorerData[id], written at docs
 * build time by docs/_ext/coop_explorer_data.py from cuda.coop.reference.*) lists, per
 * combination of the controls, the stages of an operation and every cell of every stage:
 * its value, whether it is undefined, and the tokens that say where the value came from.
 * This file only draws them: plain DOM + SVG, no network access, no framework.
 *
 * Each <div data-coop-explorer="id"> is replaced by: the controls (selects), a stage bar
 * (reset, back, step, play), the call, an SVG of the stages up to the current one, and
 * the notes.  Clicking (or Enter on) a cell follows its value: the cells of earlier stages
 * that fed it and the cells of later stages it went into are highlighted.
 * prefers-reduced-motion turns off the movement.
 */
(function () {
  "use strict";

  var SVG_NS = "http://www.w3.org/2000/svg";
  var CELL = 28, GAP = 3, THREAD_GAP = 9, GROUP_GAP = 14, SEG_GAP = 12, PAD = 12;
  var TITLE_H = 22, GROUP_H = 16, LABEL_H = 14, LINK_H = 46, PLAY_MS = 1400, FLY_MS = 650;

  function svg(tag, attrs, parent) {
    var node = document.createElementNS(SVG_NS, tag);
    for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }

  function html(tag, attrs, parent, text) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) {
      if (attrs[k] === undefined || attrs[k] === null || attrs[k] === false) continue;
      node.setAttribute(k, attrs[k] === true ? "" : attrs[k]);
    }
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function tokensOf(t) {
    if (t === null || t === undefined) return [];
    return Array.isArray(t) ? t : [t];
  }

  // Following: in an earlier stage, the cells that fed the followed value (their tokens are
  // among its tokens); in a later stage, the cells it went into (their tokens include all of
  // its tokens); in its own stage, the cells holding the same value.  For moved values (one
  // token each) all three mean equal tokens.
  function related(toks, si, followed) {
    if (!toks.length) return false;
    var inside = toks.every(function (t) { return followed.set.has(t); });
    var mine = new Set(toks);
    var covers = followed.tokens.every(function (t) { return mine.has(t); });
    if (si < followed.si) return inside;
    if (si > followed.si) return covers;
    return inside && covers;
  }

  // The stage whose cells a stage's lines and movement come from: "from", else the previous one.
  function sourceOf(st, si) {
    return typeof st.from === "number" ? st.from : si - 1;
  }

  function prefersReducedMotion() {
    return !!(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
  }

  function hue(token) {
    return (token * 47 + 200) % 360;
  }

  function Explorer(root, data) {
    this.root = root;
    this.data = data;
    this.values = data["default"].split("|");
    // Open on the finished picture (every stage drawn); Reset and Step walk through it.
    this.stage = 0;
    this.atEnd = true;
    this.follow = null; // array of tokens
    this.timer = null;
    this.id = root.getAttribute("data-coop-explorer");
    this.build();
    this.render(false);
  }

  Explorer.prototype.key = function () {
    return this.values.join("|");
  };

  Explorer.prototype.scenario = function () {
    return this.data.scenarios[this.key()];
  };

  Explorer.prototype.build = function () {
    var self = this;
    var fallback = this.root.querySelector(".coop-explorer-fallback");
    if (fallback) fallback.hidden = true;
    var ui = html("div", { "class": "coop-explorer-ui" }, this.root);
    this.ui = ui;
    var form = html("div", { "class": "coop-controls", role: "group",
                             "aria-label": this.data.title + " settings" }, ui);
    this.selects = [];
    this.data.controls.forEach(function (control, ci) {
      var label = html("label", { "class": "coop-control" }, form);
      html("span", {}, label, control.label);
      var select = html("select", { "data-control": control.name }, label);
      control.options.forEach(function (opt) {
        html("option", { value: String(opt[0]) }, select, opt[1]);
      });
      select.value = self.values[ci];
      select.addEventListener("change", function () { self.change(ci, select.value); });
      self.selects.push(select);
    });
    var bar = html("div", { "class": "coop-stagebar", role: "group", "aria-label": "stages" }, ui);
    this.btnReset = html("button", { type: "button", "data-action": "reset", title: "first stage" }, bar, "\u27f2 Reset");
    this.btnBack = html("button", { type: "button", "data-action": "back", title: "previous stage" }, bar, "\u25c0 Back");
    this.btnStep = html("button", { type: "button", "data-action": "step", title: "next stage" }, bar, "Step \u25b6");
    this.btnPlay = html("button", { type: "button", "data-action": "play", title: "play all stages" }, bar, "\u25b6 Play");
    this.stageLabel = html("span", { "class": "coop-stage-label", "aria-live": "polite" }, bar);
    this.btnReset.addEventListener("click", function () { self.stop(); self.setStage(0, false); });
    this.btnBack.addEventListener("click", function () { self.stop(); self.setStage(self.stage - 1, false); });
    this.btnStep.addEventListener("click", function () { self.stop(); self.setStage(self.stage + 1, true); });
    this.btnPlay.addEventListener("click", function () { self.togglePlay(); });
    this.call = html("pre", { "class": "coop-call" }, ui);
    this.figure = html("div", { "class": "coop-figure" }, ui);
    this.status = html("p", { "class": "coop-follow-status", "aria-live": "polite" }, ui,
                       "Click a value to follow it through the stages.");
    this.notes = html("ul", { "class": "coop-notes" }, ui);
    var legend = html("p", { "class": "coop-legend" }, ui);
    legend.innerHTML = '<span class="coop-key coop-key-undef">?</span> undefined result ' +
      '<span class="coop-key coop-key-dim">\u00b7</span> untouched, not read or padding ' +
      '<span class="coop-key coop-key-hl">7</span> followed value. ' +
      "Teaching threads: real warps have 32 lanes.";
    this.root.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape") self.setFollow(null);
    });
    window.addEventListener("resize", function () { self.fit(); });
  };

  Explorer.prototype.change = function (ci, value) {
    this.values[ci] = value;
    if (!this.data.scenarios[this.key()]) this.snap(ci);
    var self = this;
    this.selects.forEach(function (s, i) { s.value = self.values[i]; });
    this.render(false);
  };

  // Keep the changed control; among the scenarios that have it, take the one that keeps
  // the most (and the earliest) of the other controls.
  Explorer.prototype.snap = function (ci) {
    var best = null, bestScore = -1, n = this.values.length, cur = this.values;
    Object.keys(this.data.scenarios).forEach(function (key) {
      var vals = key.split("|");
      if (vals[ci] !== cur[ci]) return;
      var score = 0;
      for (var j = 0; j < n; j++) if (j !== ci && vals[j] === cur[j]) score += Math.pow(2, n - j);
      if (score > bestScore) { bestScore = score; best = vals; }
    });
    if (best) this.values = best;
  };

  Explorer.prototype.setStage = function (i, animate) {
    var sc = this.scenario();
    var last = sc.stages.length - 1;
    var next = Math.max(0, Math.min(last, i));
    var moved = next === this.stage + 1;
    this.stage = next;
    this.atEnd = next === last;
    this.applyStage(animate && moved && !prefersReducedMotion());
  };

  Explorer.prototype.togglePlay = function () {
    if (this.timer) { this.stop(); return; }
    var self = this;
    if (this.stage >= this.scenario().stages.length - 1) this.setStage(0, false);
    this.btnPlay.textContent = "\u275a\u275a Pause";
    this.root.setAttribute("data-playing", "");
    // data-coop-play-ms on the explorer overrides the pace (the browser tests use it).
    var pace = +this.root.getAttribute("data-coop-play-ms") ||
      (prefersReducedMotion() ? PLAY_MS * 1.5 : PLAY_MS);
    this.timer = window.setInterval(function () {
      if (self.stage >= self.scenario().stages.length - 1) { self.stop(); return; }
      self.setStage(self.stage + 1, true);
    }, pace);
  };

  Explorer.prototype.stop = function () {
    if (this.timer) window.clearInterval(this.timer);
    this.timer = null;
    this.btnPlay.textContent = "\u25b6 Play";
    this.root.removeAttribute("data-playing");
  };

  Explorer.prototype.cellLabel = function (sc, st, si, ci) {
    if (st.lab && st.lab[ci]) return st.lab[ci];
    if (st.kind === "memory") return st.title.split(" ")[0] + "[" + ci + "]";
    var t = Math.floor(ci / st.k), slot = ci % st.k, lane = "";
    sc.groups.forEach(function (g) {
      if (t >= g[0] && t < g[1] && sc.groups.length > 1) lane = " (" + g[2].split(" (")[0] + ", lane " + (t - g[0]) + ")";
    });
    return "thread " + t + lane + " slot " + slot;
  };

  // ---------------------------------------------------------------------------------------
  // Layout: one row per stage; cells get x/y centres used by links and flying tokens.
  // ---------------------------------------------------------------------------------------
  Explorer.prototype.layout = function (sc) {
    var rows = [], width = 0, y = PAD, threads = this.data.threads;
    sc.stages.forEach(function (st, si) {
      var cells = [], x = 0, boxes = [];
      var top = y + TITLE_H + GROUP_H + LABEL_H;
      if (st.kind === "threads") {
        var gi = 0;
        for (var t = 0; t < threads; t++) {
          while (gi < sc.groups.length - 1 && t >= sc.groups[gi][1]) { gi++; x += GROUP_GAP; }
          var x0 = x;
          for (var i = 0; i < st.k; i++) {
            cells.push({ x: x, y: top, t: t, i: i });
            x += CELL + GAP;
          }
          boxes.push({ kind: "thread", t: t, x0: x0, x1: x - GAP, g: gi });
          x += THREAD_GAP - GAP;
        }
        x -= THREAD_GAP;
      } else {
        var seg = 0, segs = st.segments || [];
        for (var j = 0; j < st.v.length; j++) {
          if (segs.length && seg < segs.length - 1 && j >= segs[seg][1]) { seg++; x += SEG_GAP; }
          cells.push({ x: x, y: top, j: j });
          x += CELL + GAP;
        }
        x -= GAP;
      }
      rows.push({ cells: cells, boxes: boxes, width: x, y: y, top: top });
      width = Math.max(width, x);
      y = top + CELL + (si < sc.stages.length - 1 ? LINK_H : PAD + 6);
    });
    rows.forEach(function (r) {
      var dx = PAD + (width - r.width) / 2;
      r.dx = dx;
      r.cells.forEach(function (c) { c.x += dx; c.cx = c.x + CELL / 2; });
      r.boxes.forEach(function (b) { b.x0 += dx; b.x1 += dx; });
    });
    return { rows: rows, width: width + 2 * PAD, height: y };
  };

  Explorer.prototype.render = function () {
    var self = this, sc = this.scenario();
    this.stop();
    // At the end before (also on opening): the end of the new scenario too.
    this.stage = this.atEnd ? sc.stages.length - 1 : Math.min(this.stage, sc.stages.length - 1);
    this.root.setAttribute("data-scenario", this.key());
    this.root.setAttribute("data-motion", prefersReducedMotion() ? "reduce" : "full");
    this.call.textContent = sc.call;
    this.notes.textContent = "";
    (sc.notes || []).forEach(function (n) { html("li", {}, self.notes, n); });
    var L = this.layout(sc);
    this.L = L;
    this.figure.textContent = "";
    var root = svg("svg", {
      "class": "coop-svg", width: L.width, height: L.height,
      viewBox: "0 0 " + L.width + " " + L.height, role: "img",
      "aria-label": this.data.title + ": " + sc.call
    }, this.figure);
    this.svg = root;
    this.fit();
    var defs = svg("defs", {}, root);
    var pat = svg("pattern", { id: "coop-hatch-" + this.id, width: 6, height: 6,
                               patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
    svg("rect", { width: 6, height: 6, "class": "coop-hatch-bg" }, pat);
    svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, "class": "coop-hatch-line" }, pat);
    this.linkLayer = svg("g", { "class": "coop-links" }, root);
    this.stageGroups = [];
    this.cellNodes = [];
    sc.stages.forEach(function (st, si) { self.drawStage(sc, st, si, L.rows[si], root); });
    this.drawLinks(sc, L);
    this.applyStage(false);
    this.applyFollow();
  };

  // Wide tiles (8 threads x 4 items) shrink to the column, down to 75 %; beyond that the
  // figure scrolls horizontally rather than become unreadable.
  Explorer.prototype.fit = function () {
    if (!this.svg || !this.L) return;
    var avail = this.figure.clientWidth - 2, w = this.L.width, h = this.L.height;
    var scale = avail > 0 && w > avail ? Math.max(0.75, avail / w) : 1;
    this.svg.setAttribute("width", Math.round(w * scale));
    this.svg.setAttribute("height", Math.round(h * scale));
    this.root.setAttribute("data-scale", scale.toFixed(2));
  };

  Explorer.prototype.drawStage = function (sc, st, si, row, root) {
    var self = this;
    var g = svg("g", { "class": "coop-stage", "data-stage": si }, root);
    this.stageGroups.push(g);
    var title = svg("text", { x: PAD, y: row.y + 14, "class": "coop-stage-title" }, g);
    title.textContent = (si + 1) + ". " + st.title;
    if (st.kind === "threads") {
      sc.groups.forEach(function (grp, gi) {
        var first = row.boxes[grp[0]], lastb = row.boxes[grp[1] - 1];
        var x0 = first.x0 - 5, x1 = lastb.x1 + 5;
        svg("rect", { x: x0, y: row.y + TITLE_H, width: x1 - x0,
                      height: GROUP_H + LABEL_H + CELL + 6, rx: 6,
                      "class": "coop-group coop-group-" + (gi % 4) }, g);
        var gl = svg("text", { x: x0 + 5, y: row.y + TITLE_H + 11, "class": "coop-group-label" }, g);
        gl.textContent = grp[2];
      });
      row.boxes.forEach(function (b) {
        var tl = svg("text", { x: (b.x0 + b.x1) / 2, y: row.top - 4, "class": "coop-thread-label",
                               "text-anchor": "middle" }, g);
        tl.textContent = "t" + b.t;
      });
    } else {
      (st.segments || []).forEach(function (s) {
        var a = row.cells[s[0]], b = row.cells[s[1] - 1];
        if (!a || !b) return;
        svg("rect", { x: a.x - 4, y: row.y + TITLE_H + GROUP_H - 2, width: b.x + CELL - a.x + 8,
                      height: LABEL_H + CELL + 6, rx: 4, "class": "coop-segment" }, g);
        var sl = svg("text", { x: a.x, y: row.y + TITLE_H + GROUP_H + 9, "class": "coop-group-label" }, g);
        sl.textContent = s[2];
      });
    }
    var undef = new Set(st.u), dim = new Set(st.d);
    var nodes = [];
    row.cells.forEach(function (c, ci) {
      var toks = tokensOf(st.t[ci]);
      var cls = "coop-cell";
      if (undef.has(ci)) cls += " coop-undef";
      if (dim.has(ci)) cls += " coop-dimmed";
      if (toks.length > 1) cls += " coop-multi";
      var label = self.cellLabel(sc, st, si, ci);
      var cg = svg("g", {
        "class": cls, tabindex: 0, role: "button", "data-stage": si, "data-cell": ci,
        "data-tokens": toks.join(" "), "aria-label": label + ": " + (undef.has(ci) ? "undefined" : st.v[ci]),
        "data-thread": c.t, "data-slot": c.i, "data-index": c.j
      }, g);
      var fill = undef.has(ci) ? "url(#coop-hatch-" + self.id + ")" :
        (toks.length === 1 ? "hsl(" + hue(toks[0]) + ", 70%, 86%)" : null);
      svg("rect", { x: c.x, y: c.y, width: CELL, height: CELL, rx: 4, "class": "coop-cell-box",
                    style: fill ? "fill:" + fill : null }, cg);
      var text = svg("text", { x: c.cx, y: c.y + CELL / 2 + 4, "text-anchor": "middle",
                               "class": "coop-cell-text" }, cg);
      var v = st.v[ci];
      text.textContent = v;
      if (v.length > 3) text.setAttribute("class", "coop-cell-text coop-cell-small");
      var tip = svg("title", {}, cg);
      tip.textContent = label + " = " + (undef.has(ci) ? "undefined" : v);
      cg.addEventListener("click", function () { self.clickCell(si, ci); });
      cg.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); self.clickCell(si, ci); }
      });
      nodes.push(cg);
    });
    if (st.caption) {
      var cap = svg("text", { x: PAD, y: row.top + CELL + 14, "class": "coop-caption" }, g);
      cap.textContent = st.caption;
    }
    this.cellNodes.push(nodes);
  };

  Explorer.prototype.drawLinks = function (sc, L) {
    var self = this;
    this.links = [];
    for (var si = 1; si < sc.stages.length; si++) {
      var st = sc.stages[si], mode = st.link || "all", pi0 = sourceOf(st, si);
      var prev = sc.stages[pi0];
      var layer = svg("g", { "class": "coop-link-stage", "data-stage": si }, this.linkLayer);
      var index = new Map();
      prev.t.forEach(function (t, ci) {
        tokensOf(t).forEach(function (tok) {
          if (!index.has(tok)) index.set(tok, []);
          index.get(tok).push(ci);
        });
      });
      if (mode === "none") { this.links.push(layer); continue; }
      st.t.forEach(function (t, ci) {
        var toks = tokensOf(t);
        if (mode === "max") {  // one line per cell: from the latest input it combines
          var present = toks.filter(function (tok) { return index.has(tok); });
          toks = present.length ? [Math.max.apply(null, present)] : [];
        }
        var seen = new Set();
        toks.forEach(function (tok) {
          (index.get(tok) || []).forEach(function (pi) {
            if (seen.has(pi)) return;
            seen.add(pi);
            var a = L.rows[pi0].cells[pi], b = L.rows[si].cells[ci];
            svg("path", {
              d: "M" + a.cx + "," + (a.y + CELL) + " C" + a.cx + "," + (a.y + CELL + LINK_H / 2) + " " +
                 b.cx + "," + (b.y - LINK_H / 2 - 20) + " " + b.cx + "," + (b.y - GROUP_H - LABEL_H + 4),
              "class": "coop-link", "data-from": pi, "data-to": ci
            }, layer);
          });
        });
      });
      this.links.push(layer);
    }
  };

  Explorer.prototype.applyStage = function (animate) {
    var sc = this.scenario(), self = this;
    var n = sc.stages.length;
    this.stageGroups.forEach(function (g, si) {
      g.classList.toggle("coop-hidden", si > self.stage);
      g.classList.toggle("coop-current", si === self.stage);
      g.setAttribute("aria-hidden", si > self.stage ? "true" : "false");
      self.cellNodes[si].forEach(function (c) { c.setAttribute("tabindex", si > self.stage ? -1 : 0); });
    });
    this.links.forEach(function (layer, li) {
      layer.classList.toggle("coop-hidden", li + 1 > self.stage);
    });
    this.root.setAttribute("data-stage", String(this.stage));
    this.stageLabel.textContent = "Stage " + (this.stage + 1) + " of " + n + ": " + sc.stages[this.stage].title;
    this.btnBack.disabled = this.stage === 0;
    this.btnReset.disabled = this.stage === 0;
    this.btnStep.disabled = this.stage === n - 1;
    if (animate) this.animateInto(this.stage);
  };

  // Movement: a copy of each source cell flies to where its value lands.
  Explorer.prototype.animateInto = function (si) {
    if (si < 1) return;
    var sc = this.scenario(), st = sc.stages[si], from = sourceOf(st, si), prev = sc.stages[from];
    var L = this.L, layer = svg("g", { "class": "coop-fly-layer" }, this.svg);
    var src = new Map();
    prev.t.forEach(function (t, ci) { var tk = tokensOf(t); if (tk.length === 1) src.set(tk[0], ci); });
    var flyers = [];
    st.t.forEach(function (t, ci) {
      var tk = tokensOf(t);
      if (tk.length !== 1 || !src.has(tk[0]) || st.link === "none") return;
      var a = L.rows[from].cells[src.get(tk[0])], b = L.rows[si].cells[ci];
      var g = svg("g", { "class": "coop-fly" }, layer);
      svg("rect", { x: a.x, y: a.y, width: CELL, height: CELL, rx: 4,
                    style: "fill:hsl(" + hue(tk[0]) + ", 70%, 80%)" }, g);
      var tx = svg("text", { x: a.cx, y: a.y + CELL / 2 + 4, "text-anchor": "middle" }, g);
      tx.textContent = prev.v[src.get(tk[0])];
      flyers.push([g, b.x - a.x, b.y - a.y]);
    });
    this.stageGroups[si].classList.add("coop-arriving");
    var self = this;
    window.requestAnimationFrame(function () {
      window.requestAnimationFrame(function () {
        flyers.forEach(function (f) { f[0].style.transform = "translate(" + f[1] + "px," + f[2] + "px)"; });
      });
    });
    window.setTimeout(function () {
      if (layer.parentNode) layer.parentNode.removeChild(layer);
      if (self.stageGroups[si]) self.stageGroups[si].classList.remove("coop-arriving");
    }, FLY_MS + 50);
  };

  Explorer.prototype.clickCell = function (si, ci) {
    var st = this.scenario().stages[si];
    var toks = tokensOf(st.t[ci]);
    if (!toks.length) {
      this.setFollow(null);
      this.status.textContent = this.cellLabel(this.scenario(), st, si, ci) +
        (st.u.indexOf(ci) >= 0 ? " is undefined: no value to follow." : " holds no value from the inputs.");
      return;
    }
    var same = this.follow && this.follow.si === si && this.follow.ci === ci;
    this.setFollow(same ? null : { si: si, ci: ci, tokens: toks });
  };

  Explorer.prototype.setFollow = function (follow) {
    this.follow = follow;
    this.applyFollow();
  };

  Explorer.prototype.applyFollow = function () {
    var sc = this.scenario(), self = this, f = this.follow;
    var followed = { set: new Set(f ? f.tokens : []), tokens: f ? f.tokens : [], si: f ? f.si : 0 };
    var hits = [];
    this.cellNodes.forEach(function (nodes, si) {
      var st = sc.stages[si];
      nodes.forEach(function (node, ci) {
        var on = !!f && related(tokensOf(st.t[ci]), si, followed);
        node.classList.toggle("coop-hl", on);
        node.classList.toggle("coop-faded", !!f && !on);
        node.classList.toggle("coop-selected", !!f && f.si === si && f.ci === ci);
        if (on && !(f.si === si && f.ci === ci) && si <= self.stage) hits.push(self.cellLabel(sc, st, si, ci));
      });
    });
    this.links.forEach(function (layer, li) {
      var st = sc.stages[li + 1], prev = sc.stages[sourceOf(st, li + 1)];
      Array.prototype.forEach.call(layer.childNodes, function (p) {
        var on = !!f && related(tokensOf(prev.t[+p.getAttribute("data-from")]), sourceOf(st, li + 1), followed) &&
                 related(tokensOf(st.t[+p.getAttribute("data-to")]), li + 1, followed);
        p.classList.toggle("coop-link-hl", on);
        p.classList.toggle("coop-faded", !!f && !on);
      });
    });
    if (f) {
      this.root.setAttribute("data-follow", f.tokens.join(" "));
      var st = sc.stages[f.si];
      var what = this.cellLabel(sc, st, f.si, f.ci) + " = " + st.v[f.ci];
      this.status.textContent = "Following " + what + (hits.length ? " \u2192 " +
        hits.slice(0, 6).join("; ") + (hits.length > 6 ? "; \u2026 (" + hits.length + " cells)" : "") : "") +
        ". Press Escape or click it again to stop.";
    } else {
      this.root.removeAttribute("data-follow");
      this.status.textContent = "Click a value to follow it through the stages.";
    }
  };

  function mount() {
    var all = window.CoopExplorerData || {};
    var nodes = document.querySelectorAll("[data-coop-explorer]");
    Array.prototype.forEach.call(nodes, function (node) {
      if (node.coopExplorer) return;
      var id = node.getAttribute("data-coop-explorer");
      if (!all[id]) {
        node.setAttribute("data-coop-error", "no data for explorer " + id);
        return; // the static fallback stays visible
      }
      node.coopExplorer = new Explorer(node, all[id]);
      node.setAttribute("data-coop-ready", "");
    });
  }

  window.CoopExplorer = { mount: mount, Explorer: Explorer };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
