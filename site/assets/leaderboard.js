/* EffectBench leaderboard: prices, sorting, filtering and the substrate boards, in the URL.
 *
 * Each pack's table holds one board per substrate (one tbody each, the first in SPEC order shown
 * first); the substrate picker shows another. The build writes every board in its default order
 * at the documented prices (net value per 100 tasks, drawn against doing nothing, ties by task
 * success, SWER, record-wrong and over-halt: effectbench.verdicts) and marks each row with that
 * position (data-order). Nothing is re-ordered on load unless the URL asks for other prices or
 * another sort, so the order with JavaScript equals the order without it and in the downloads.
 * Prices (costs=SILENT,WRONG,HALT or a preset name, and value=V, the value of a correct effect)
 * re-rank every board by the same rules and formulas, from each board's per-task counts
 * (boards/KEY.js): net values and their task-clustered intervals, break-even values, the order,
 * the rank ranges from paired value differences at the board's family-wise level, and the
 * doing-nothing line. EB_STATS holds the statistics, shared with the compare view. Invalid prices
 * are refused with a message, never shown as NaN. Every sort breaks ties by the default order, in
 * both directions. The first click on a column sorts it best-first (data-eb-first); the next
 * click on it reverses it. State lives in the query string (costs=..., value=...,
 * sort-KEY=column.dir, filter-KEY=text, substrate-KEY=name, tier-KEY=tier), so a shared link opens
 * the same view. A trust tier (reproduced, fresh, signed: data-eb-tier) shows that tier's rows
 * alone, their rank ranges recomputed among them (the family is the rows shown).
 * Unsigned previews of a local build (data-status="preview") sit in a section of their own after
 * each board's ranked rows (tbody[data-eb-previews="VIEW"]): every sort, re-pricing and filter
 * orders them among themselves there, and none of them ever enters the ranked rows, the rank
 * ranges or the place of the doing-nothing line (which is the ranked rows' alone). A tier filter
 * hides them (a preview is of no tier).
 * A board with more systems than the page holds (tbody[data-eb-shards]) loads the rest of its rows,
 * in the default order, with their per-task counts, from its row shards (boards/VIEW-N.js, JSON
 * gzip-compressed in base64, inflated here) the first time a reader sorts, filters, re-prices or
 * asks for every row; until then nothing else is fetched. No request leaves the site.
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

  /* A script of the site, once (works from file:// as well as over http). */
  var scripts = {};
  function load(src) {
    if (!scripts[src]) {
      scripts[src] = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = src;
        s.onload = function () { resolve(); };
        s.onerror = function () { reject(new Error("could not load " + src)); };
        document.head.appendChild(s);
      });
    }
    return scripts[src];
  }

  /* The data of a data script: its JSON gzip-compressed in base64
   * (effectbench.site._scripts.packed), inflated. The episode view reads its receipts with it. */
  function inflate(b64) {
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser cannot inflate it (no DecompressionStream)"));
    }
    var raw = atob(b64);
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }
  window.EB_INFLATE = inflate;

  var inflated = {};

  /* The n parts of KEY's data that its page or first script leaves out, in order: the scripts
   * FOLDER/KEY-I.js, each registering window[VARIABLE]["KEY/I"] as its JSON packed
   * (effectbench.site._scripts.part_scripts writes them), loaded and inflated once. */
  function loadParts(folder, variable, key, n) {
    var srcs = [];
    for (var i = 0; i < n; i++) srcs.push(folder + "/" + key + "-" + i + ".js");
    return Promise.all(srcs.map(load)).then(function () {
      var all = window[variable] || {};
      return Promise.all(srcs.map(function (src, i) {
        var name = key + "/" + i;
        if (!Object.prototype.hasOwnProperty.call(all, name) || typeof all[name] !== "string") {
          throw new Error(src + " holds no part of " + key);
        }
        var id = variable + " " + name;
        if (!inflated[id]) inflated[id] = inflate(all[name]);
        return inflated[id];
      }));
    });
  }
  window.EB_PARTS = loadParts;  /* the compare view loads its boards' parts with it */

  function slugRows(body) {
    return Array.prototype.slice.call(body.rows).filter(function (r) { return r.hasAttribute("data-slug"); });
  }

  function isPreview(row) { return row.getAttribute("data-status") === "preview"; }

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
    this.tierSelect = document.querySelector('select[data-eb-tier="' + this.key + '"]');
    this.tier = "";  /* the trust tier shown ("": every tier); ranks are recomputed on it */
    this.w = null;   /* the prices the rows were last ranked at (null: the board's own) */
    this.complete = this.mains().every(function (body) { return !body.hasAttribute("data-eb-shards"); });
    this.loading = null;
  }

  /* Run fn once every row of the board is on the page: at once when they are, else after the
   * board's row shards are loaded (each shard's rows follow the page's in the default order, and
   * its per-task counts join the board's data for re-ranking). */
  Board.prototype.whenComplete = function (fn) {
    if (this.complete) { fn(); return; }
    if (!this.loading) this.loading = this.loadRest();
    var board = this;
    this.table.setAttribute("aria-busy", "true");
    this.loading.then(fn, function (error) {
      board.mains().forEach(function (body) {
        var more = document.querySelector('[data-eb-more="' + body.getAttribute("data-eb-board-key") + '"]');
        if (more) more.textContent = "The rest of this board did not load (" + error.message + "); the CSV download holds every row.";
      });
    }).then(function () { board.table.removeAttribute("aria-busy"); });
  };

  Board.prototype.loadRest = function () {
    var board = this;
    var bodies = this.mains();
    return Promise.all(bodies.map(function (body) {
      var n = Number(body.getAttribute("data-eb-shards") || 0);
      return loadParts("boards", "EB_MORE", body.getAttribute("data-eb-board-key"), n);
    })).then(function (shards) {
      var data = (window.EB_BOARD || {})[board.key];
      bodies.forEach(function (body, b) {
        var view = data && data.views[body.getAttribute("data-eb-view") || ""];
        var previews = board.previewsOf(body);
        shards[b].forEach(function (shard) {
          /* each row into its section: a preview never joins the ranked rows */
          var holder = document.createElement("tbody");
          holder.innerHTML = shard.rows.join("");
          slugRows(holder).forEach(function (row) {
            (previews && isPreview(row) ? previews : body).appendChild(row);
          });
          if (view) view.systems = view.systems.concat(shard.systems);
        });
      });
      bodies.forEach(function (body) {
        var more = document.querySelector('[data-eb-more="' + body.getAttribute("data-eb-board-key") + '"]');
        if (more) more.parentNode.removeChild(more);
        board.placeLine(body);
      });
      board.complete = true;
    });
  };

  Board.prototype.header = function (column) {
    for (var i = 0; i < this.headers.length; i++) {
      if (this.headers[i].getAttribute("data-eb-column") === column) return this.headers[i];
    }
    return null;
  };

  /* Every tbody of the table: each board's ranked rows and its previews' section. */
  Board.prototype.bodies = function () {
    return Array.prototype.slice.call(this.table.tBodies);
  };

  /* Each board's ranked rows (one tbody per substrate, the first shown first). */
  Board.prototype.mains = function () {
    return this.bodies().filter(function (body) { return body.hasAttribute("data-eb-board-key"); });
  };

  /* The section of unsigned previews of the board whose ranked rows are ``body`` (null: none). */
  Board.prototype.previewsOf = function (body) {
    var key = body.getAttribute("data-eb-board-key");
    return this.bodies().filter(function (b) { return b.getAttribute("data-eb-previews") === key; })[0] || null;
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
    var rows = slugRows(body);
    var after = Number(body.getAttribute("data-eb-line-after"));
    line.hidden = !isDefault || after > rows.length;  /* its place is among rows not loaded yet */
    body.insertBefore(line, after < rows.length ? rows[after] : null);
  };

  /* The substrate shown: the one the picker (or the address) names, else the first. */
  Board.prototype.firstView = function () {
    var first = this.mains()[0];
    return first ? first.getAttribute("data-eb-view") || "" : "";
  };

  Board.prototype.showView = function () {
    var names = this.bodies().map(function (body) { return body.getAttribute("data-eb-view") || ""; });
    if (names.indexOf(this.view) < 0 || this.view === this.firstView()) this.view = "";
    var view = this.view || this.firstView();
    this.bodies().forEach(function (body) { body.hidden = (body.getAttribute("data-eb-view") || "") !== view; });
    document.querySelectorAll('[data-eb-facts="' + this.key + '"]').forEach(function (el) {
      el.hidden = el.getAttribute("data-eb-view") !== view;
    });
    if (this.substrate) this.substrate.value = view;
  };

  Board.prototype.applyFilter = function () {
    var words = this.query.toLowerCase().split(/\s+/).filter(Boolean);
    var tier = this.tier;
    var total = 0;
    var shown = 0;
    this.bodies().forEach(function (body) {
      var any = false;
      slugRows(body).forEach(function (row) {
        var text = row.getAttribute("data-eb-text") || row.textContent.toLowerCase();
        var keep = words.every(function (w) { return text.indexOf(w) !== -1; }) &&
          (!tier || row.getAttribute("data-eb-tier") === tier);
        row.hidden = !keep;
        if (keep) any = true;
        if (!body.hidden) {
          total += 1;
          if (keep) shown += 1;
        }
      });
      /* a section of previews none of whose rows is shown says nothing (its rows may load later) */
      var head = body.querySelector("tr[data-eb-previews-head]");
      if (head) head.hidden = !any && (words.length > 0 || !!tier);
    });
    if (this.filter && this.filter.value !== this.query) this.filter.value = this.query;
    if (this.tierSelect && this.tierSelect.value !== tier) this.tierSelect.value = tier;
    if (this.count) this.count.textContent = words.length || tier ? shown + " of " + total + " shown" : "";
  };

  Board.prototype.remember = function (replace) {
    var changes = {};
    var sorted = this.column !== this.defaultColumn || this.dir !== this.defaultDir;
    changes["sort-" + this.key] = sorted ? this.column + "." + this.dir : "";
    changes["filter-" + this.key] = this.query;
    changes["substrate-" + this.key] = this.view;
    changes["tier-" + this.key] = this.tier;
    setParams(changes, replace);
  };

  /* The view the address describes (on load, and on Back and Forward). */
  Board.prototype.restore = function () {
    var sort = param("sort-" + this.key);
    var parts = sort ? sort.split(".") : [];
    var known = sort && this.header(parts[0]);
    var column = known ? parts[0] : this.defaultColumn;
    var dir = known ? (parts[1] === "desc" ? "desc" : "asc") : this.defaultDir;
    var resort = column !== this.column || dir !== this.dir;
    this.column = column;
    this.dir = dir;
    this.clicked = known ? column : "";
    this.view = param("substrate-" + this.key) || "";
    this.showView();
    this.query = param("filter-" + this.key) || "";
    this.typing = false;
    var tier = param("tier-" + this.key) || "";
    var retier = tier !== this.tier;
    this.tier = tier;
    var board = this;
    function apply() {
      if (retier) board.rerank();  /* sorts and filters too */
      else {
        if (resort) board.sortRows();
        board.applyFilter();
      }
    }
    if (resort || this.query || retier) this.whenComplete(apply);
    else apply();
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
        board.typing = false;
        board.remember();
        board.whenComplete(function () { board.sortRows(); });
      });
    });
    this.mains().forEach(function (body) {
      var key = body.getAttribute("data-eb-board-key");
      var button = document.querySelector('button[data-eb-show-all="' + key + '"]');
      if (!button) return;
      button.hidden = false;  /* without JavaScript the CSV is the way to every row */
      button.addEventListener("click", function () { board.whenComplete(function () { board.applyFilter(); }); });
    });
    if (this.filter) {
      this.filter.addEventListener("input", function () {
        board.query = board.filter.value;
        board.remember(board.typing);  /* one step of history per filter typed */
        board.typing = true;
        board.whenComplete(function () { board.applyFilter(); });
      });
      this.filter.addEventListener("change", function () { board.typing = false; });
    }
    if (this.tierSelect) {
      this.tierSelect.addEventListener("change", function () {
        board.tier = board.tierSelect.value;
        board.typing = false;
        board.remember();
        board.whenComplete(function () { board.rerank(); });
      });
    }
    if (this.substrate) {
      this.substrate.closest("[hidden]") && this.substrate.closest("[hidden]").removeAttribute("hidden");
      this.substrate.addEventListener("change", function () {
        board.view = board.substrate.value === board.firstView() ? "" : board.substrate.value;
        board.showView();
        board.applyFilter();
        board.typing = false;
        board.remember();
      });
    }
  };

  /* ---- Statistics: effectbench.metrics, the same operations in the same order. */

  var Z95 = 1.959963984540054;
  var PER = 100;

  function sum(xs) { var s = 0; for (var i = 0; i < xs.length; i++) s += xs[i]; return s; }

  /* effectbench.metrics.wilson */
  function wilson(k, n, z) {
    if (!(n > 0)) return [0, 1];
    var p = k / n;
    var z2 = z * z;
    var denom = 1 + z2 / n;
    var centre = (p + z2 / (2 * n)) / denom;
    var half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
    return [Math.min(Math.max(centre - half, 0), 1), Math.min(Math.max(centre + half, 0), 1)];
  }

  /* effectbench.metrics.design_effect: Rao and Scott's, with its small-sample factor g / (g - 1) */
  function designEffect(k, m) {
    var n = sum(m);
    if (n === 0 || Math.max.apply(null, m) <= 1) return 1;
    var p = sum(k) / n;
    var binomial = n * p * (1 - p);
    var g = m.length;
    if (binomial <= 1e-12 * n || g < 2) {
      var sq = 0;
      for (var j = 0; j < g; j++) sq += m[j] * m[j];
      return Math.max(1, sq / n);
    }
    var ss = 0;
    for (var i = 0; i < g; i++) ss += Math.pow(k[i] - p * m[i], 2);
    return Math.max(1, g / (g - 1) * ss / binomial);
  }

  /* effectbench.metrics.clustered_wilson */
  function clusteredWilson(k, m, z) {
    var n = sum(m);
    if (n === 0) return { lo: 0, hi: 1, deff: 1, neff: 0 };
    var deff = designEffect(k, m);
    var w = wilson(sum(k) / deff, n / deff, z);
    return { lo: w[0], hi: w[1], deff: deff, neff: n / deff };
  }

  /* effectbench.metrics.value_per_episode: the one formula of net value */
  function valuePerEpisode(shares, w) {
    return w.value * shares[0] - w.silent * shares[1] - w.wrong * shares[2] - w.halt * shares[3];
  }

  function weightsOf(w) { return [w.value, -w.silent, -w.wrong, -w.halt]; }
  function worstOf(w) { return Math.max(w.silent + w.wrong, w.halt); }

  /* effectbench.metrics.VALUE_EVENTS of a system of a board script: per-task counts */
  var VALUE_KEYS = ["y", "s", "r", "o"];
  function counts(sys) { return VALUE_KEYS.map(function (key) { return sys[key]; }); }

  /* effectbench.metrics.shares */
  function shares(ks, m) {
    var n = sum(m);
    if (n === 0) return [0, 0, 0, 0];
    return ks.map(function (k) { return sum(k) / n; });
  }

  /* effectbench.metrics.paired.cluster_difference: the mean of xa over ma minus that of xb over
   * mb (per-unit sums of the same units; xb null: 0), with its CR1 half-width at ts[g - 1]
   * (ts: Student's t by degrees of freedom, shipped with the data). */
  var SPREAD_FLOOR = 1e-24;
  function clusterDifference(xa, ma, xb, mb, ts) {
    var g = xa.length, na = sum(ma);
    var meanA = na ? sum(xa) / na : 0, meanB = 0, nb = 0, u;
    var infl = [], scale = [];
    for (u = 0; u < g; u++) {
      infl.push(na ? (xa[u] - meanA * ma[u]) / na : 0);
      scale.push(na ? (Math.abs(xa[u]) + Math.abs(meanA) * ma[u]) / na : 0);
    }
    var same = false;
    if (xb) {
      nb = sum(mb);
      meanB = nb ? sum(xb) / nb : 0;
      same = true;
      for (u = 0; u < g; u++) {
        if (xa[u] !== xb[u] || ma[u] !== mb[u]) same = false;
        if (nb) {
          infl[u] = infl[u] - (xb[u] - meanB * mb[u]) / nb;
          scale[u] = scale[u] + (Math.abs(xb[u]) + Math.abs(meanB) * mb[u]) / nb;
        }
      }
    }
    var d = meanA - meanB;
    if (g < 2 && !same) return { first: meanA, second: meanB, diff: d, half: Infinity };
    var squares = 0, floor = 0;
    for (u = 0; u < g; u++) { squares += infl[u] * infl[u]; floor += scale[u] * scale[u]; }
    if (squares <= SPREAD_FLOOR * floor || same) squares = 0;
    var se = g > 1 ? Math.sqrt(g / (g - 1) * squares) : 0;
    return { first: meanA, second: meanB, diff: d, half: se ? ts[g - 1] * se : 0 };
  }

  /* effectbench.metrics.value_sums: each unit's worth, minus doing nothing's there (a: each
   * unit's episodes whose correct action was available; null: not known) */
  function valueSums(ks, a, w) {
    return ks[0].map(function (y, u) {
      var x = w.value * y - w.silent * ks[1][u] - w.wrong * ks[2][u] - w.halt * ks[3][u];
      return a ? x + w.halt * a[u] : x;
    });
  }

  /* effectbench.metrics.idle_of */
  function idleOf(a, m) { var n = sum(m); return a && n ? sum(a) / n : null; }

  /* effectbench.metrics.net_per_episode */
  function netPerEpisode(ks, m, a, w) {
    var point = valuePerEpisode(shares(ks, m), w);
    var idle = idleOf(a, m);
    return idle === null ? point : point - valuePerEpisode([0, 0, 0, idle], w);
  }

  /* effectbench.metrics.net_value (per 100 tasks, against doing nothing on the same episodes) */
  function netValue(ks, m, a, w, ts) {
    var idle = idleOf(a, m);
    var shift = idle === null ? 0 : valuePerEpisode([0, 0, 0, idle], w);
    var least = -worstOf(w) - shift, most = w.value - shift;
    if (sum(m) === 0) return { value: 0, lo: PER * least, hi: PER * most };
    var point = netPerEpisode(ks, m, a, w);
    var half = clusterDifference(valueSums(ks, a, w), m, null, null, ts).half;
    return {
      value: PER * point,
      lo: PER * Math.max(least, point - half),
      hi: PER * Math.min(most, point + half)
    };
  }

  /* effectbench.metrics.break_even */
  function breakEven(ks, m, w, idle) {
    if (idle === null) return null;
    var sh = shares(ks, m);
    var harm = w.silent * sh[1] + w.wrong * sh[2] + w.halt * sh[3];
    var idleHarm = w.halt * idle;
    if (sh[0] <= 0) return harm < idleHarm ? 0 : Infinity;
    if (harm <= idleHarm) return 0;
    return (harm - idleHarm) / sh[0];
  }

  /* The per-task counts of two systems on the tasks both ran (task ids by index). */
  function common(a, b, keys) {
    var where = {};
    b.t.forEach(function (t, i) { where[t] = i; });
    var out = { tasks: 0, ma: [], mb: [], aa: [], ab: [], ka: keys.map(function () { return []; }), kb: keys.map(function () { return []; }) };
    a.t.forEach(function (t, i) {
      if (!Object.prototype.hasOwnProperty.call(where, t)) return;
      var j = where[t];
      out.tasks += 1;
      out.ma.push(a.m[i]); out.mb.push(b.m[j]);
      if (a.a) out.aa.push(a.a[i]);
      if (b.a) out.ab.push(b.a[j]);
      keys.forEach(function (key, e) { out.ka[e].push(a[key][i]); out.kb[e].push(b[key][j]); });
    });
    if (!a.a) out.aa = null;
    if (!b.a) out.ab = null;
    return out;
  }

  /* effectbench.metrics.rate_difference (per-task counts of the common tasks; ts: t by degrees) */
  function rateDifference(ka, ma, kb, mb, ts) {
    var g = ma.length;
    if (g === 0) return { tasks: 0, first: 0, second: 0, diff: 0, lo: -1, hi: 1 };
    var d = clusterDifference(ka, ma, kb, mb, ts);
    return {
      tasks: g, first: d.first, second: d.second, diff: d.diff,
      lo: Math.max(-1, d.diff - d.half), hi: Math.min(1, d.diff + d.half)
    };
  }

  /* effectbench.metrics.value_difference (per-task counts of the common tasks, VALUE_EVENTS;
   * aa, ab: each unit's episodes whose correct action was available, or null) */
  function valueDifference(ka, ma, kb, mb, w, ts, aa, ab) {
    var span = PER * (w.value + worstOf(w));
    var g = ma.length;
    if (g === 0) return { tasks: 0, first: 0, second: 0, diff: 0, lo: -span, hi: span };
    aa = aa || null;
    ab = ab || null;
    var va = netPerEpisode(ka, ma, aa, w), vb = netPerEpisode(kb, mb, ab, w);
    var d = va - vb;
    var c = clusterDifference(valueSums(ka, aa, w), ma, valueSums(kb, ab, w), mb, ts);
    return {
      tasks: g, first: PER * va, second: PER * vb, diff: PER * d,
      lo: Math.max(-span, PER * (d - c.half)), hi: Math.min(span, PER * (d + c.half))
    };
  }


  /* ---- Prices: effectbench.metrics.parse_prices, the same messages. */

  var HARM_NAMES = ["silent wrong effect", "wrong record", "over-halt"];
  var NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
  var INFINITE = /^[+-]?inf(inity)?$/i;

  function fmt(x) { return String(Number(x.toPrecision(12))); }

  /* effectbench.metrics.value._number */
  function number(raw, what) {
    var text = String(raw).trim();
    if (NUMBER.test(text)) return { x: Number(text) };
    if (INFINITE.test(text)) return { x: text.charAt(0) === "-" ? -Infinity : Infinity };
    if (text.toLowerCase() === "nan") return { error: what + " must be a number, got NaN" };
    return { error: what + " must be a number, got '" + raw + "'" };
  }

  /* effectbench.metrics.prices */
  function checked(value, harms, max) {
    var v = number(value, "the value of a correct effect");
    if (v.error) return v;
    if (v.x <= 0) {
      return { error: "the value of a correct effect must be above 0, got " + value +
        " (at 0 no work is worth doing and doing nothing tops every board)" };
    }
    if (v.x > max || !isFinite(v.x)) return { error: "the value of a correct effect must be at most " + max + ", got " + value };
    var out = [];
    for (var i = 0; i < 3; i++) {
      var name = "the price of a " + HARM_NAMES[i];
      var h = number(harms[i], name);
      if (h.error) return h;
      if (h.x < 0) return { error: name + " cannot be negative, got " + harms[i] };
      if (h.x > max || !isFinite(h.x)) return { error: name + " must be at most " + max + ", got " + harms[i] };
      out.push(h.x);
    }
    return { w: { value: v.x, silent: out[0], wrong: out[1], halt: out[2] } };
  }

  function pricesOf(list) { return { value: list[0], silent: list[1], wrong: list[2], halt: list[3] }; }
  function listOf(w) { return [w.value, w.silent, w.wrong, w.halt]; }

  /* effectbench.metrics.parse_prices: ``costs`` a preset or three harms, ``value`` the value */
  function parsePrices(costs, value, data) {
    var base = pricesOf(data.defaults);
    var text = costs === null ? "" : String(costs).trim();
    if (Object.prototype.hasOwnProperty.call(data.presets, text)) {
      base = pricesOf(data.presets[text]);
    } else if (text) {
      var parts = text.split(",").map(function (x) { return x.trim(); });
      if (parts.length !== 3) {
        return { error: "expected three prices 'silent,wrong_record,over_halt' (e.g. " +
          data.defaults.slice(1).map(fmt).join(",") + ") or a preset (" + Object.keys(data.presets).join(", ") +
          "), got '" + text + "'" };
      }
      var harms = checked(base.value, parts, data.max);
      if (harms.error) return harms;
      base = harms.w;
    }
    if (value === null) return { w: base };
    return checked(String(value).trim(), [base.silent, base.wrong, base.halt], data.max);
  }

  window.EB_STATS = {
    Z95: Z95, wilson: wilson, designEffect: designEffect, clusteredWilson: clusteredWilson,
    rateDifference: rateDifference, valueDifference: valueDifference, parsePrices: parsePrices,
    standing: standing, rankRanges: rankRanges
  };

  /* effectbench.verdicts.grain and order_key */
  function grain(x) { return Math.floor(x * 1e6 + 0.5); }

  function before(a, b) {
    var ka = [-grain(a.value), -a.sh[0], a.sh[1], a.sh[2], a.sh[3]];
    var kb = [-grain(b.value), -b.sh[0], b.sh[1], b.sh[2], b.sh[3]];
    for (var i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i];
    return a.key < b.key;
  }

  /* effectbench.verdicts.standing, with the row's interval and break-even (ts: t at 95% by
   * degrees of freedom) */
  function standing(sys, w, ts) {
    var ks = counts(sys);
    var a = sys.a || null;
    var sh = shares(ks, sys.m);
    var nv = netValue(ks, sys.m, a, w, ts);
    return {
      sys: sys, key: sys.slug, status: sys.status, sh: sh,
      value: PER * netPerEpisode(ks, sys.m, a, w), lo: nv.lo, hi: nv.hi,
      even: breakEven(ks, sys.m, w, idleOf(a, sys.m))
    };
  }

  /* effectbench.verdicts.separation, pair by pair: i worth more than j beyond noise */
  function separated(a, b, w, view) {
    var c = common(a.sys, b.sys, VALUE_KEYS);
    if (c.tasks < view.min_tasks) return false;
    return valueDifference(c.ka, c.ma, c.kb, c.mb, w, view.t, c.aa, c.ab).lo > 0;
  }

  function sameTasks(st, order) {
    if (!order.length) return false;
    var first = st[order[0]].sys.t;
    return order.every(function (i) {
      var t = st[i].sys.t;
      if (t.length !== first.length) return false;
      for (var j = 0; j < t.length; j++) if (t[j] !== first[j]) return false;
      return true;
    });
  }

  /* effectbench.verdicts._shared_separation, one system's part: its per-unit influences e and
   * scales (of effectbench.metrics.paired.cluster_difference over value_sums), their squared
   * lengths, and its net value per episode. */
  function separationParts(s, w) {
    var ks = counts(s.sys), m = s.sys.m, a = s.sys.a || null;
    var x = valueSums(ks, a, w);
    var n = sum(m), mean = sum(x) / n;
    var g = m.length, e = new Float64Array(g), sc = new Float64Array(g), ee = 0, ss = 0;
    for (var u = 0; u < g; u++) {
      e[u] = (x[u] - mean * m[u]) / n;
      sc[u] = (Math.abs(x[u]) + Math.abs(mean) * m[u]) / n;
      ee += e[u] * e[u];
      ss += sc[u] * sc[u];
    }
    return { v: netPerEpisode(ks, m, a, w), e: e, sc: sc, ee: ee, ss: ss };
  }

  /* Which of the ranked systems (``order``) is worth more than which beyond noise: beyond(p, q)
   * for positions p, q. Systems that ran the same tasks are compared all at once, from each
   * one's parts (computed once); others pair by pair on the tasks both ran. */
  function separation(st, order, w, view, pairwise) {
    if (!pairwise && sameTasks(st, order)) {
      var g = st[order[0]].sys.t.length;
      if (g < view.min_tasks || g < 2) return function () { return false; };
      var parts = order.map(function (i) { return separationParts(st[i], w); });
      var t = view.t[g - 1];
      return function (p, q) {
        var a = parts[p], b = parts[q], dot = 0, cross = 0;
        for (var u = 0; u < g; u++) { dot += a.e[u] * b.e[u]; cross += a.sc[u] * b.sc[u]; }
        var squares = a.ee + b.ee - 2 * dot;
        var floor = SPREAD_FLOOR * (a.ss + b.ss + 2 * cross);
        squares = squares <= floor ? 0 : Math.max(squares, 0);
        return (a.v - b.v) - t * Math.sqrt(g / (g - 1) * squares) > 0;
      };
    }
    return function (p, q) { return separated(st[order[p]], st[order[q]], w, view); };
  }

  /* effectbench.verdicts.rank_ranges over the ranked systems, in order: each pair (p above q)
   * is tested once, for p's worst rank and q's best (``pairwise``: every pair on its own,
   * even where all ran the same tasks; the tests hold the two ways to each other). */
  function rankRanges(st, order, w, view, pairwise) {
    var n = order.length;
    var beyond = separation(st, order, w, view, pairwise);
    var best = [], worst = [];
    for (var i = 0; i < n; i++) { best.push(1); worst.push(n); }
    for (var p = 0; p < n; p++) {
      for (var q = p + 1; q < n; q++) {
        if (beyond(p, q)) { best[q] += 1; worst[p] -= 1; }
      }
    }
    return [best, worst];
  }

  /* effectbench.site._pages.signed and break_even_text */
  function signed(x) {
    var text = x.toFixed(1);
    if (text === "-0.0" || text === "0.0") return "0.0";
    return text.charAt(0) === "-" ? text : "+" + text;
  }

  /* effectbench.site._format.against_nothing */
  function againstNothing(lo, hi) {
    if (lo > 0) return "above doing nothing";
    if (hi < 0) return "below doing nothing";
    return "within noise of doing nothing";
  }

  function evenText(x) {
    if (x === null) return "";
    if (!isFinite(x)) return "never beats doing nothing";
    if (x === 0) return "beats doing nothing at any value";
    return "break-even " + (x < 1 ? x.toFixed(2) : x.toFixed(1));
  }

  /* Rank the rows again at the prices they were last ranked at: after the tier changes. */
  Board.prototype.rerank = function () {
    var data = (window.EB_BOARD || {})[this.key];
    if (!data) { this.applyFilter(); return; }
    this.reprice(this.w || pricesOf(data.defaults));
  };

  Board.prototype.reprice = function (w) {
    var data = (window.EB_BOARD || {})[this.key];
    if (!data) return;
    var board = this;
    this.w = w;
    this.mains().forEach(function (body) {
      var view = data.views[body.getAttribute("data-eb-view") || ""];
      if (!view) return;
      var previews = board.previewsOf(body);
      var idle = view.idle;
      var st = view.systems.map(function (sys) { return standing(sys, w, view.t95); });
      var order = st.map(function (_, i) { return i; });
      order.sort(function (i, j) { return before(st[i], st[j]) ? -1 : before(st[j], st[i]) ? 1 : 0; });
      /* the family ranked together: the ranked rows of the tier shown (every tier: all) */
      var ranked = order.filter(function (i) {
        return st[i].status === "ranked" && (!board.tier || st[i].sys.tier === board.tier);
      });
      /* a tier shown alone is a family of its own: its level (t, fewest tasks) is its own */
      var family = board.tier && view.tiers && view.tiers[board.tier];
      var ranges = rankRanges(st, ranked, w, family ? { t: family.t, min_tasks: family.min_tasks } : view);
      var rank = {};
      ranked.forEach(function (i, p) { rank[i] = [ranges[0][p], ranges[1][p]]; });
      var rows = {};
      slugRows(body).concat(previews ? slugRows(previews) : []).forEach(function (row) {
        rows[row.getAttribute("data-slug")] = row;
      });
      var line = idle === null ? null : 0;  /* every value is against doing nothing: its line is 0 */
      var lineAfter = 0, placed = 0;
      order.forEach(function (i, p) {
        var s = st[i];
        var row = rows[s.key];
        if (!row) return;
        /* a preview keeps to its own section, in the same order; it places no line */
        var apart = previews && isPreview(row);
        if (!apart) placed += 1;
        row.setAttribute("data-order", String(p));
        var rankCell = row.querySelector('[data-col="rank"]');
        if (rankCell) {
          var r = rank[i];
          if (r) rankCell.textContent = r[0] === r[1] ? String(r[0]) : r[0] + "\u2013" + r[1];
          rankCell.setAttribute("data-sort", String(p));
        }
        var cell = row.querySelector('[data-col="value"]');
        if (cell) {
          cell.setAttribute("data-sort", s.value.toFixed(6));
          cell.querySelector(".eb-p").textContent = signed(s.value);
          cell.querySelector(".eb-ci").textContent = "[" + signed(s.lo) + ", " + signed(s.hi) + "]";
          var said = cell.querySelector("[data-eb-verdict]");
          if (said) said.textContent = againstNothing(s.lo, s.hi);
          var even = cell.querySelector("[data-eb-break-even]");
          if (even) even.textContent = evenText(s.even);
        }
        if (!apart && line !== null && grain(s.value) >= line) lineAfter = placed;
        (apart ? previews : body).appendChild(row);
      });
      if (idle !== null) body.setAttribute("data-eb-line-after", String(lineAfter));
    });
    if (this.column !== this.defaultColumn || this.dir !== this.defaultDir) this.sortRows();
    else this.mains().forEach(function (body) { board.placeLine(body); });
    this.applyFilter();
  };

  /* The page's prices: from the address (costs=, value=), else the board's defaults. */
  function Prices(boards) {
    this.boards = boards;
    this.data = null;
    var keys = Object.keys(window.EB_BOARD || {});
    if (keys.length) this.data = window.EB_BOARD[keys[0]];
    this.panel = document.querySelector("[data-eb-prices]");
    this.error = document.querySelector("[data-eb-price-error]");
    this.text = document.querySelector("[data-eb-prices-text]");
    this.value = document.querySelector("input[data-eb-value]");
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
    var harms = [w.silent, w.wrong, w.halt];
    if (this.value) this.value.value = fmt(w.value);
    this.inputs.forEach(function (input, i) { input.value = fmt(harms[i]); });
    if (this.text) {
      this.text.textContent = "correct effect " + fmt(w.value) + " \u00b7 silent wrong effect " + fmt(w.silent) +
        " \u00b7 wrong record " + fmt(w.wrong) + " \u00b7 over-halt " + fmt(w.halt);
    }
    if (this.preset) this.preset.value = preset || "";
  };

  Prices.prototype.presetOf = function (w) {
    var presets = this.data.presets;
    var mine = listOf(w);
    return Object.keys(presets).filter(function (k) {
      return presets[k].every(function (x, i) { return x === mine[i]; });
    })[0] || "";
  };

  Prices.prototype.apply = function (w, remember) {
    var defaults = this.data.defaults;
    var same = listOf(w).every(function (x, i) { return x === defaults[i]; });
    var preset = this.presetOf(w);
    this.show(w, preset);
    this.boards.forEach(function (b) { b.whenComplete(function () { b.reprice(w); }); });
    if (remember) {
      var harms = fmt(w.silent) + "," + fmt(w.wrong) + "," + fmt(w.halt);
      setParams({
        costs: same ? "" : (preset || harms),
        value: same || preset ? "" : fmt(w.value)
      });
    }
  };

  Prices.prototype.fromInputs = function () {
    var harms = this.inputs.map(function (input) { return input.value; }).join(",");
    var value = this.value ? this.value.value : null;
    var parsed = parsePrices(harms, value, this.data);
    if (parsed.error) { this.say("Not re-ranked: " + parsed.error + "."); return; }
    this.say("");
    this.apply(parsed.w, true);
  };

  /* The prices the address names (on load, and on Back and Forward); ``again``: the boards
   * may show other prices now, so the defaults are applied when the address names none. */
  Prices.prototype.fromAddress = function (again) {
    var costs = param("costs");
    var value = param("value");
    var defaults = pricesOf(this.data.defaults);
    if ((costs !== null && costs !== "") || (value !== null && value !== "")) {
      var parsed = parsePrices(costs || null, value === "" ? null : value, this.data);
      if (parsed.error) {
        var named = [costs ? "costs=" + costs : "", value ? "value=" + value : ""].filter(Boolean).join(", ");
        this.say("The prices in this page's address (" + named + ") were not used: " + parsed.error +
          ". The boards show the default prices.");
        this.show(defaults, "default");
        if (again) this.apply(defaults, false);
      } else {
        this.say("");
        this.apply(parsed.w, false);
      }
    } else if (again) {
      this.say("");
      this.apply(defaults, false);
    }
  };

  Prices.prototype.setUp = function () {
    if (!this.data) return;
    var prices = this;
    this.fromAddress(false);
    var button = document.querySelector("[data-eb-reprice]");
    if (button) button.addEventListener("click", function () { prices.fromInputs(); });
    this.inputs.concat(this.value ? [this.value] : []).forEach(function (input) {
      input.addEventListener("keydown", function (e) { if (e.key === "Enter") prices.fromInputs(); });
    });
    if (this.preset) {
      this.preset.addEventListener("change", function () {
        var name = prices.preset.value;
        if (!name) return;
        prices.say("");
        prices.apply(pricesOf(prices.data.presets[name]), true);
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

  /* A submission's task x trial table, drawn from the page's own data: one letter per episode
   * (script[data-eb-matrix]: trials, per task its letters, "-" for no row), each letter linking
   * to its episode's receipt when the site publishes them. Written with textContent only. */
  function drawMatrix() {
    var box = document.querySelector("[data-eb-matrix-box]");
    var source = document.querySelector("script[data-eb-matrix]");
    if (!box || !source || box.getAttribute("data-eb-ready")) return;
    box.setAttribute("data-eb-ready", "1");
    var data = JSON.parse(source.textContent);
    function node(tag, attrs, text) {
      var n = document.createElement(tag);
      Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); });
      if (text !== undefined) n.textContent = text;
      return n;
    }
    var table = node("table", { "class": "eb-table eb-matrix", "data-eb": "matrix" });
    var head = node("tr", {});
    head.appendChild(node("th", { scope: "col" }, "Task"));
    data.trials.forEach(function (t) { head.appendChild(node("th", { scope: "col" }, String(t))); });
    table.appendChild(node("thead", {})).appendChild(head);
    var body = table.appendChild(node("tbody", {}));
    data.tasks.forEach(function (pair) {
      var task = pair[0], letters = pair[1];
      var tr = body.appendChild(node("tr", {}));
      tr.appendChild(node("th", { scope: "row" }, task));
      data.trials.forEach(function (trial, i) {
        var letter = letters.charAt(i);
        var name = Object.prototype.hasOwnProperty.call(data.names, letter) ? data.names[letter] : "";
        var td = tr.appendChild(node("td", { "class": "o-" + (name ? letter : "X") }));
        var shown = name ? letter : "·";
        if (data.receipts && letter !== "-") {
          var q = new URLSearchParams();
          q.set("s", data.slug); q.set("t", task); q.set("n", String(trial));
          td.appendChild(node("a", {
            href: "../episode.html?" + q.toString(),
            title: task + ", trial " + trial + ": " + (name || "unknown outcome")
          }, shown));
        } else {
          td.textContent = shown;
        }
      });
    });
    box.appendChild(table);
  }

  function setUp() {
    nameTheSearchDialog();
    drawMatrix();
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
