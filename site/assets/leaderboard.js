/* EffectBench leaderboard: prices, sorting, filtering and substrate views of the boards, in the URL.
 *
 * The build writes every board in its default order at the documented prices (expected cost per
 * 100 tasks, never above a system that dominates it, a system that never acts never above one
 * with more correct effects at no higher SWER: effectbench.verdicts) and marks each row with that
 * position (data-order). Nothing is re-ordered on load unless the URL asks for other prices or
 * another sort, so the order with JavaScript equals the order without it and in the downloads.
 * Prices (costs=SILENT,WRONG,HALT or a preset name) re-rank every board by the same rules and
 * formulas, from each board's per-task counts (boards/KEY.js): costs and their task-clustered
 * intervals, the order, the rank ranges from paired task-clustered cost differences, and the
 * doing-nothing line. Invalid prices are refused with a message, never shown as NaN.
 * Every sort breaks ties by the default order, in both directions. The first click on a column
 * sorts it best-first (data-eb-first); the next click on it reverses it.
 * State lives in the query string (costs=..., sort-KEY=column.dir, filter-KEY=text,
 * substrate-KEY=name), so a shared link opens the same view. No request leaves the page.
 */
(function () {
  "use strict";

  function param(name) {
    return new URLSearchParams(window.location.search).get(name);
  }

  /* Each change a reader makes is a step of the browser's history (Back undoes it); the
   * keystrokes of one filter are one step. replace: rewrite the current step instead. */
  function setParams(changes, replace) {
    var params = new URLSearchParams(window.location.search);
    Object.keys(changes).forEach(function (name) {
      if (changes[name]) params.set(name, changes[name]);
      else params.delete(name);
    });
    var query = params.toString();
    var url = window.location.pathname + (query ? "?" + query : "") + window.location.hash;
    if (url === window.location.pathname + window.location.search + window.location.hash) return;
    try {
      if (replace) window.history.replaceState(window.history.state, "", url);
      else window.history.pushState({ eb: true }, "", url);
    } catch (e) {
      /* a browser that refuses to rewrite this URL keeps the view without the link */
    }
  }

  function slugRows(body) {
    return Array.prototype.slice.call(body.rows).filter(function (r) { return r.hasAttribute("data-slug"); });
  }

  function Board(table) {
    this.table = table;
    this.key = table.getAttribute("data-eb-board");
    this.headers = Array.prototype.slice.call(table.querySelectorAll("thead th[data-eb-column]"));
    var initial = table.querySelector("thead th[aria-sort]");
    this.defaultColumn = initial ? initial.getAttribute("data-eb-column") : "";
    this.defaultDir = initial && initial.getAttribute("aria-sort") === "descending" ? "desc" : "asc";
    this.column = this.defaultColumn;
    this.dir = this.defaultDir;
    this.clicked = "";  /* the column last clicked: only a second click on it reverses it */
    this.view = "";
    this.query = "";
    this.typing = false;  /* the filter's last change was a keystroke of the one being typed */
    this.filter = document.querySelector('input[data-eb-filter="' + this.key + '"]');
    this.count = document.querySelector('[data-eb-count="' + this.key + '"]');
    this.substrate = document.querySelector('select[data-eb-substrate="' + this.key + '"]');
    this.bodies().forEach(function (body) {
      var line = body.querySelector("tr[data-eb-line]");
      if (!line) return;
      var rows = slugRows(body);
      var i = rows.indexOf(line.nextElementSibling);
      body.setAttribute("data-eb-line-after", String(i < 0 ? rows.length : i));
    });
  }

  Board.prototype.header = function (column) {
    for (var i = 0; i < this.headers.length; i++) {
      if (this.headers[i].getAttribute("data-eb-column") === column) return this.headers[i];
    }
    return null;
  };

  Board.prototype.bodies = function () {
    return Array.prototype.slice.call(this.table.tBodies);
  };

  Board.prototype.sortRows = function () {
    var th = this.header(this.column);
    if (!th) return;
    var column = this.column;
    var numeric = th.getAttribute("data-eb-type") === "number";
    var sign = this.dir === "desc" ? -1 : 1;
    function value(row) {
      var cell = row.querySelector('[data-col="' + column + '"]');
      var raw = cell ? cell.getAttribute("data-sort") || "" : "";
      if (!numeric) return raw;
      var v = parseFloat(raw);
      return isNaN(v) ? Infinity : v;
    }
    var board = this;
    this.bodies().forEach(function (body) {
      var rows = slugRows(body).map(function (row) {
        return { row: row, value: value(row), order: parseInt(row.getAttribute("data-order"), 10) };
      });
      rows.sort(function (a, b) {
        var d = 0;
        if (a.value < b.value) d = -1;
        else if (a.value > b.value) d = 1;
        return d * sign || a.order - b.order;
      });
      rows.forEach(function (r) { body.appendChild(r.row); });
      board.placeLine(body);
    });
    this.headers.forEach(function (h) {
      if (h === th) h.setAttribute("aria-sort", sign < 0 ? "descending" : "ascending");
      else h.removeAttribute("aria-sort");
    });
  };

  /* The doing-nothing line: after the last row of the default order that costs no more than doing
   * nothing; shown only while the rows are in the default order. */
  Board.prototype.placeLine = function (body) {
    var line = body.querySelector("tr[data-eb-line]");
    if (!line) return;
    var isDefault = this.column === this.defaultColumn && this.dir === this.defaultDir;
    line.hidden = !isDefault;
    var rows = slugRows(body);
    var after = Number(body.getAttribute("data-eb-line-after"));
    body.insertBefore(line, after < rows.length ? rows[after] : null);
  };

  Board.prototype.showView = function () {
    var view = this.view || "all";
    var shown = null;
    this.bodies().forEach(function (body) {
      var match = (body.getAttribute("data-eb-view") || "all") === view;
      body.hidden = !match;
      if (match) shown = body;
    });
    if (!shown) {
      this.view = "";
      this.bodies().forEach(function (body) {
        body.hidden = (body.getAttribute("data-eb-view") || "all") !== "all";
      });
    }
    if (this.substrate) this.substrate.value = this.view;
  };

  Board.prototype.applyFilter = function () {
    var words = this.query.toLowerCase().split(/\s+/).filter(Boolean);
    var total = 0;
    var shown = 0;
    this.bodies().forEach(function (body) {
      slugRows(body).forEach(function (row) {
        var text = row.getAttribute("data-eb-text") || row.textContent.toLowerCase();
        var keep = words.every(function (w) { return text.indexOf(w) !== -1; });
        row.hidden = !keep;
        if (!body.hidden) {
          total += 1;
          if (keep) shown += 1;
        }
      });
    });
    if (this.filter && this.filter.value !== this.query) this.filter.value = this.query;
    if (this.count) this.count.textContent = words.length ? shown + " of " + total + " shown" : "";
  };

  Board.prototype.remember = function (replace) {
    var changes = {};
    var sorted = this.column !== this.defaultColumn || this.dir !== this.defaultDir;
    changes["sort-" + this.key] = sorted ? this.column + "." + this.dir : "";
    changes["filter-" + this.key] = this.query;
    changes["substrate-" + this.key] = this.view;
    setParams(changes, replace);
  };

  /* The view the address describes (on load, and on Back and Forward). */
  Board.prototype.restore = function () {
    var sort = param("sort-" + this.key);
    var parts = sort ? sort.split(".") : [];
    var known = sort && this.header(parts[0]);
    var column = known ? parts[0] : this.defaultColumn;
    var dir = known ? (parts[1] === "desc" ? "desc" : "asc") : this.defaultDir;
    if (column !== this.column || dir !== this.dir) {
      this.column = column;
      this.dir = dir;
      this.sortRows();
    }
    this.clicked = known ? column : "";
    this.view = param("substrate-" + this.key) || "";
    this.showView();
    this.query = param("filter-" + this.key) || "";
    this.typing = false;
    this.applyFilter();
  };

  Board.prototype.listen = function () {
    var board = this;
    this.headers.forEach(function (th) {
      var button = th.querySelector("button[data-eb-sort]");
      if (!button) return;
      button.addEventListener("click", function () {
        var column = th.getAttribute("data-eb-column");
        if (column === board.clicked) board.dir = board.dir === "asc" ? "desc" : "asc";
        else board.dir = th.getAttribute("data-eb-first") === "desc" ? "desc" : "asc";
        board.column = column;
        board.clicked = column;
        board.sortRows();
        board.typing = false;
        board.remember();
      });
    });
    if (this.filter) {
      this.filter.addEventListener("input", function () {
        board.query = board.filter.value;
        board.applyFilter();
        board.remember(board.typing);  /* one step of history per filter typed */
        board.typing = true;
      });
      this.filter.addEventListener("change", function () { board.typing = false; });
    }
    if (this.substrate) {
      this.substrate.closest("[hidden]") && this.substrate.closest("[hidden]").removeAttribute("hidden");
      this.substrate.addEventListener("change", function () {
        board.view = board.substrate.value;
        board.showView();
        board.applyFilter();
        board.typing = false;
        board.remember();
      });
    }
  };

  /* ---- Prices: the same rules and formulas as effectbench.metrics and effectbench.verdicts. */

  var PRICE_NAMES = ["silent wrong effect", "wrong record", "over-halt"];

  function fmt(x) { return String(Number(x.toPrecision(12))); }

  /* Mirrors effectbench.metrics.parse_costs / cost_weights: a preset name or three prices. */
  function parsePrices(raw, data) {
    raw = String(raw).trim();
    if (Object.prototype.hasOwnProperty.call(data.presets, raw)) return { w: data.presets[raw].slice() };
    var parts = raw.split(",").map(function (p) { return p.trim(); });
    if (parts.length !== 3) {
      return { error: "expected three prices 'silent,wrong_record,over_halt' (e.g. " +
        data.defaults.map(fmt).join(",") + ") or a preset (" + Object.keys(data.presets).join(", ") +
        "), got '" + raw + "'" };
    }
    var w = [];
    for (var i = 0; i < 3; i++) {
      var text = parts[i];
      var value = text === "" ? NaN : Number(text);
      if (text.toLowerCase() === "nan" || (isNaN(value) && !/^[-+]?inf/i.test(text))) {
        return { error: "the price of a " + PRICE_NAMES[i] + " must be a number, got '" + text + "'" };
      }
      if (/^[-+]?inf/i.test(text)) value = text.charAt(0) === "-" ? -Infinity : Infinity;
      if (value < 0) return { error: "the price of a " + PRICE_NAMES[i] + " cannot be negative, got " + text };
      if (value > data.max || !isFinite(value)) {
        return { error: "the price of a " + PRICE_NAMES[i] + " must be at most " + data.max + ", got " + text };
      }
      w.push(value);
    }
    if (!w.some(function (x) { return x > 0; })) return { error: "at least one price must be above 0" };
    return { w: w };
  }

  function sum(xs) { var s = 0; for (var i = 0; i < xs.length; i++) s += xs[i]; return s; }

  function taskCosts(sys, w) {
    return sys.m.map(function (_, i) { return w[0] * sys.s[i] + w[1] * sys.r[i] + w[2] * sys.o[i]; });
  }

  /* effectbench.metrics.expected_cost */
  function expectedCost(sys, w, t975) {
    var worst = Math.max(w[0] + w[1], w[2]);
    var n = sum(sys.m);
    if (n === 0) return { cost: 0, lo: 0, hi: 100 * worst };
    var c = taskCosts(sys, w);
    var mean = sum(c) / n;
    var g = sys.m.length;
    if (g < 2) return { cost: 100 * mean, lo: 0, hi: 100 * worst };
    var ss = 0;
    for (var i = 0; i < g; i++) ss += Math.pow(c[i] - mean * sys.m[i], 2);
    var half = t975[g - 2] * Math.sqrt(g / (g - 1) * ss / (n * n));
    return { cost: 100 * mean, lo: 100 * Math.max(0, mean - half), hi: 100 * Math.min(worst, mean + half) };
  }

  /* effectbench.verdicts.standing */
  function standing(sys, w, t975) {
    var n = Math.max(sum(sys.m), 1);
    var idle = sum(sys.m) > 0 && sys.m.every(function (m, i) { return sys.h[i] === m; });
    var c = expectedCost(sys, w, t975);
    return {
      sys: sys, key: sys.slug, name: sys.name, status: sys.status,
      swer: sum(sys.s) / n, rw: sum(sys.r) / n, oh: sum(sys.o) / n, ce: sum(sys.c) / n,
      idle: idle, cost: c.cost, lo: c.lo, hi: c.hi
    };
  }

  function dominates(a, b) {
    var pa = [a.swer, a.rw, a.oh], pb = [b.swer, b.rw, b.oh];
    var same = true;
    for (var i = 0; i < 3; i++) {
      if (pa[i] > pb[i]) return false;
      if (pa[i] !== pb[i]) same = false;
    }
    return !same;
  }

  function inactionBelow(idle, actor) {
    return idle.idle && !actor.idle && actor.swer <= idle.swer && actor.ce > idle.ce;
  }

  function round9(x) { return Math.round(x * 1e9) / 1e9; }

  function before(a, b) {  /* effectbench.verdicts._priority */
    var ka = [round9(a.cost), a.swer, a.rw, a.oh], kb = [round9(b.cost), b.swer, b.rw, b.oh];
    for (var i = 0; i < 4; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i];
    if (a.name !== b.name) return a.name < b.name;
    return a.key < b.key;
  }

  /* effectbench.verdicts.board_order */
  function boardOrder(st) {
    var n = st.length;
    var after = st.map(function () { return []; });
    var waiting = st.map(function () { return 0; });
    var held = st.map(function () { return 0; });
    var ruled = {};
    for (var i = 0; i < n; i++) {
      for (var j = 0; j < n; j++) {
        if (i === j) continue;
        if (inactionBelow(st[j], st[i])) { held[j] += 1; ruled[i + ":" + j] = true; }
        else if (!(dominates(st[i], st[j]) && !inactionBelow(st[i], st[j]))) continue;
        after[i].push(j);
        waiting[j] += 1;
      }
    }
    var done = st.map(function () { return false; });
    var ready = [];
    for (var k = 0; k < n; k++) if (!waiting[k]) ready.push(k);
    var placed = [];
    while (placed.length < n) {
      ready = ready.filter(function (x) { return !done[x]; });
      if (!ready.length) {
        var free = [];
        for (var f = 0; f < n; f++) if (!done[f] && !held[f]) free.push(f);
        ready.push(free.reduce(function (a, b) { return before(st[b], st[a]) ? b : a; }));
      }
      var pick = ready.reduce(function (a, b) { return before(st[b], st[a]) ? b : a; });
      done[pick] = true;
      placed.push(pick);
      after[pick].forEach(function (j) {
        waiting[j] -= 1;
        if (ruled[pick + ":" + j]) held[j] -= 1;
        if (!waiting[j] && !done[j]) ready.push(j);
      });
    }
    return placed;
  }

  /* effectbench.metrics.cost_difference, beyond noise or not (common tasks by index). */
  function costSeparated(a, b, w, t975) {
    var where = {};
    b.sys.t.forEach(function (t, i) { where[t] = i; });
    var ca = [], ma = [], cb = [], mb = [];
    var costA = taskCosts(a.sys, w), costB = taskCosts(b.sys, w);
    a.sys.t.forEach(function (t, i) {
      if (!Object.prototype.hasOwnProperty.call(where, t)) return;
      var j = where[t];
      ca.push(costA[i]); ma.push(a.sys.m[i]); cb.push(costB[j]); mb.push(b.sys.m[j]);
    });
    var g = ma.length;
    if (g < 2) return false;
    var worst = Math.max(w[0] + w[1], w[2]);
    var na = sum(ma), nb = sum(mb);
    var meanA = sum(ca) / na, meanB = sum(cb) / nb;
    var d = meanA - meanB, ss = 0;
    for (var i = 0; i < g; i++) {
      var e = (ca[i] - meanA * ma[i]) / na - (cb[i] - meanB * mb[i]) / nb;
      ss += e * e;
    }
    var half = t975[g - 2] * Math.sqrt(g / (g - 1) * ss);
    var lo = Math.max(-worst, d - half), hi = Math.min(worst, d + half);
    return lo > 0 || hi < 0;
  }

  /* effectbench.verdicts.rank_ranges over the ranked systems, in order. */
  function rankRanges(st, order, w, t975) {
    var n = order.length;
    function apart(i, j) { return inactionBelow(st[j], st[i]) || costSeparated(st[i], st[j], w, t975); }
    var best = [], worst = [];
    for (var p = 0; p < n; p++) {
      var b = 1, down = 0;
      for (var q = 0; q < p; q++) if (apart(order[q], order[p])) b += 1;
      for (var r = p + 1; r < n; r++) if (apart(order[p], order[r])) down += 1;
      best.push(b);
      worst.push(n - down);
    }
    return [best, worst];
  }

  Board.prototype.reprice = function (w) {
    var data = (window.EB_BOARD || {})[this.key];
    if (!data) return;
    var board = this;
    this.bodies().forEach(function (body) {
      var view = data.views[body.getAttribute("data-eb-view") || "all"];
      if (!view) return;
      var st = view.systems.map(function (sys) { return standing(sys, w, data.t975); });
      var order = boardOrder(st);
      var ranked = order.filter(function (i) { return st[i].status === "ranked"; });
      var ranges = rankRanges(st, ranked, w, data.t975);
      var rank = {};
      ranked.forEach(function (i, p) { rank[i] = [ranges[0][p], ranges[1][p]]; });
      var rows = {};
      slugRows(body).forEach(function (row) { rows[row.getAttribute("data-slug")] = row; });
      var idleRate = body.getAttribute("data-eb-idle-rate");
      var idle = idleRate === null ? null : 100 * w[2] * Number(idleRate);
      var lineAfter = 0;
      order.forEach(function (i, p) {
        var s = st[i];
        var row = rows[s.key];
        if (!row) return;
        row.setAttribute("data-order", String(p));
        var rankCell = row.querySelector('[data-col="rank"]');
        if (rankCell) {
          var r = rank[i];
          if (r) rankCell.textContent = r[0] === r[1] ? String(r[0]) : r[0] + "\u2013" + r[1];
          rankCell.setAttribute("data-sort", String(p));
        }
        var costCell = row.querySelector('[data-col="cost"]');
        if (costCell) {
          costCell.setAttribute("data-sort", s.cost.toFixed(6));
          costCell.querySelector(".eb-p").textContent = s.cost.toFixed(1);
          costCell.querySelector(".eb-ci").textContent = "[" + s.lo.toFixed(1) + ", " + s.hi.toFixed(1) + "]";
          var flag = costCell.querySelector("[data-eb-idle-flag]");
          var over = idle !== null && s.cost > idle + 1e-9;
          if (over && !flag) {
            flag = document.createElement("span");
            flag.className = "eb-idle-flag";
            flag.setAttribute("data-eb-idle-flag", "");
            flag.textContent = "more than doing nothing";
            costCell.appendChild(flag);
          } else if (!over && flag) {
            flag.parentNode.removeChild(flag);
          }
        }
        if (idle !== null && s.cost <= idle + 1e-9) lineAfter = p + 1;
        body.appendChild(row);
      });
      var line = body.querySelector("tr[data-eb-line]");
      if (line && idle !== null) {
        body.setAttribute("data-eb-line-after", String(lineAfter));
        var strong = line.querySelector("strong");
        if (strong) strong.textContent = idle.toFixed(1);
      }
    });
    if (this.column !== this.defaultColumn || this.dir !== this.defaultDir) this.sortRows();
    else this.bodies().forEach(function (body) { board.placeLine(body); });
    this.applyFilter();
  };

  /* The page's prices: from the address (costs=), else the board's defaults. */
  function Prices(boards) {
    this.boards = boards;
    this.data = null;
    var keys = Object.keys(window.EB_BOARD || {});
    if (keys.length) this.data = window.EB_BOARD[keys[0]];
    this.panel = document.querySelector("[data-eb-prices]");
    this.error = document.querySelector("[data-eb-price-error]");
    this.text = document.querySelector("[data-eb-prices-text]");
    this.inputs = Array.prototype.slice.call(document.querySelectorAll("input[data-eb-price]"));
    this.preset = document.querySelector("select[data-eb-preset]");
  }

  Prices.prototype.say = function (message) {
    if (!this.error) return;
    this.error.textContent = message;
    this.error.hidden = !message;
    if (message && this.panel) this.panel.open = true;
  };

  Prices.prototype.show = function (w, preset) {
    this.inputs.forEach(function (input, i) { input.value = fmt(w[i]); });
    if (this.text) {
      this.text.textContent = "silent wrong effect " + fmt(w[0]) + " \u00b7 wrong record " + fmt(w[1]) +
        " \u00b7 over-halt " + fmt(w[2]);
    }
    if (this.preset) this.preset.value = preset || "";
  };

  Prices.prototype.presetOf = function (w) {
    var presets = this.data.presets;
    return Object.keys(presets).filter(function (k) {
      return presets[k].every(function (x, i) { return x === w[i]; });
    })[0] || "";
  };

  Prices.prototype.apply = function (w, remember) {
    var same = w.every(function (x, i) { return x === this.data.defaults[i]; }, this);
    this.show(w, this.presetOf(w));
    this.boards.forEach(function (b) { b.reprice(w); });
    if (remember) {
      var preset = this.presetOf(w);
      setParams({ costs: same ? "" : (preset || w.map(fmt).join(",")) });
    }
  };

  Prices.prototype.fromInputs = function () {
    var raw = this.inputs.map(function (input) { return input.value; }).join(",");
    var parsed = parsePrices(raw, this.data);
    if (parsed.error) { this.say("Not re-ranked: " + parsed.error + "."); return; }
    this.say("");
    this.apply(parsed.w, true);
  };

  /* The prices the address names (on load, and on Back and Forward); ``again``: the boards
   * may show other prices now, so the defaults are applied when the address names none. */
  Prices.prototype.fromAddress = function (again) {
    var raw = param("costs");
    if (raw !== null && raw !== "") {
      var parsed = parsePrices(raw, this.data);
      if (parsed.error) {
        this.say("The prices in this page's address (costs=" + raw + ") were not used: " + parsed.error +
          ". The boards show the default prices.");
        this.show(this.data.defaults, "default");
        if (again) this.apply(this.data.defaults.slice(), false);
      } else {
        this.say("");
        this.apply(parsed.w, false);
      }
    } else if (again) {
      this.say("");
      this.apply(this.data.defaults.slice(), false);
    }
  };

  Prices.prototype.setUp = function () {
    if (!this.data) return;
    var prices = this;
    this.fromAddress(false);
    var button = document.querySelector("[data-eb-reprice]");
    if (button) button.addEventListener("click", function () { prices.fromInputs(); });
    this.inputs.forEach(function (input) {
      input.addEventListener("keydown", function (e) { if (e.key === "Enter") prices.fromInputs(); });
    });
    if (this.preset) {
      this.preset.addEventListener("change", function () {
        var name = prices.preset.value;
        if (!name) return;
        prices.say("");
        prices.apply(prices.data.presets[name].slice(), true);
      });
    }
  };

  /* Wide tables the theme wraps in a scroller: make the scroller reachable by keyboard. */
  function focusableScrollers() {
    document.querySelectorAll(".md-typeset__scrollwrap, .md-typeset table:not([class])").forEach(
      function (el) {
        if (el.hasAttribute("tabindex") || el.scrollWidth <= el.clientWidth + 1) return;
        if (el.querySelector("a[href], button, input, select, textarea, [tabindex]")) return;
        el.setAttribute("tabindex", "0");
        el.setAttribute("role", "region");
        el.setAttribute("aria-label", "Scrollable table");
      }
    );
  }

  /* Theme workaround: the search dialog has no accessible name. */
  function nameTheSearchDialog() {
    document.querySelectorAll('.md-search[role="dialog"]:not([aria-label])').forEach(function (el) {
      el.setAttribute("aria-label", "Search the site");
    });
  }

  function setUp() {
    nameTheSearchDialog();
    var boards = [];
    document.querySelectorAll("table[data-eb-board]").forEach(function (table) {
      if (table.getAttribute("data-eb-ready")) return;
      table.setAttribute("data-eb-ready", "1");
      var board = new Board(table);
      board.listen();
      board.restore();
      boards.push(board);
    });
    var prices = boards.length ? new Prices(boards) : null;
    if (prices) prices.setUp();
    if (boards.length && !window.EB_HISTORY) {
      /* Back and Forward: every board and the prices return to what the address says. */
      window.EB_HISTORY = true;
      window.addEventListener("popstate", function () {
        if (prices && prices.data) prices.fromAddress(true);
        boards.forEach(function (b) { b.restore(); });
      });
    }
    focusableScrollers();
    (window.EB_SETUP || []).forEach(function (more) { more(); });  /* e.g. the compare view's */
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(setUp);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUp);
  } else {
    setUp();
  }
})();
