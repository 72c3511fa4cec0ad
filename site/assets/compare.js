/* EffectBench compare view: two systems of one board, episode by episode, counted by task.
 *
 * Data: every board's compare file (compare/KEY.js) sets EB_COMPARE[KEY] = {episodes, systems,
 * events, prices, t975}: the paired episodes (task, trial, seed, category, substrate), one outcome
 * letter per episode and system ("." when a system did not run it), which letters count for each
 * rate, the board's prices and Student's t quantiles (t975[df - 1]).
 * For each rate, in total and per (category x substrate) cell, the view shows the first system's
 * rate minus the second's over the episodes both ran, with a paired, task-clustered 95% interval:
 * each rate's Wilson interval on its Rao-Scott effective sample (the design effect from the
 * spread of its per-task counts), combined by Newcombe's square-and-add corrected for the
 * correlation of the two rates across tasks. The expected cost per 100 tasks is differenced with
 * a task-paired cluster-robust standard error and Student's t on tasks - 1. The formulas are
 * effectbench.metrics.rate_difference and cost_difference, evaluated here in the browser; a test
 * holds the two equal. The chosen board and pair live in the URL (?board=KEY&a=SLUG&b=SLUG);
 * prices in ?costs=SILENT,WRONG,HALT (as on the leaderboard).
 */
(function () {
  "use strict";

  var Z95 = 1.959963984540054;

  function wilson(k, n) {
    if (n <= 0) return [0, 1];
    var p = k / n;
    var z2 = Z95 * Z95;
    var denom = 1 + z2 / n;
    var centre = (p + z2 / (2 * n)) / denom;
    var half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
    return [Math.min(1, Math.max(0, centre - half)), Math.min(1, Math.max(0, centre + half))];
  }

  function sum(xs) { var s = 0; for (var i = 0; i < xs.length; i++) s += xs[i]; return s; }

  /* Mirrors effectbench.metrics.design_effect. */
  function designEffect(k, m) {
    var n = sum(m);
    if (n === 0 || Math.max.apply(null, m) <= 1) return 1;
    var p = sum(k) / n;
    var binomial = n * p * (1 - p);
    if (binomial <= 1e-12 * n) {
      var sq = 0; m.forEach(function (x) { sq += x * x; });
      return Math.max(1, sq / n);
    }
    var clustered = 0;
    for (var i = 0; i < k.length; i++) clustered += Math.pow(k[i] - p * m[i], 2);
    return Math.max(1, clustered / binomial);
  }

  function clusteredWilson(k, m) {
    var n = sum(m);
    if (n === 0) return { lo: 0, hi: 1, deff: 1, neff: 0 };
    var deff = designEffect(k, m);
    var w = wilson(sum(k) / deff, n / deff);
    return { lo: w[0], hi: w[1], deff: deff, neff: n / deff };
  }

  /* Mirrors effectbench.metrics.rate_difference (per-task counts of the common tasks). */
  function rateDifference(ka, ma, kb, mb) {
    var g = ma.length;
    if (g === 0) return { tasks: 0, diff: 0, lo: -1, hi: 1 };
    var pa = sum(ka) / sum(ma);
    var pb = sum(kb) / sum(mb);
    var ca = clusteredWilson(ka, ma);
    var cb = clusteredWilson(kb, mb);
    var va = 0, vb = 0, cov = 0;
    for (var i = 0; i < g; i++) {
      var ra = ka[i] - pa * ma[i];
      var rb = kb[i] - pb * mb[i];
      va += ra * ra; vb += rb * rb; cov += ra * rb;
    }
    var r = va > 0 && vb > 0 ? cov / Math.sqrt(va * vb) : 0;
    var d = pa - pb;
    var daLo = pa - ca.lo, daHi = ca.hi - pa, dbLo = pb - cb.lo, dbHi = cb.hi - pb;
    var below = daLo * daLo + dbHi * dbHi - 2 * r * daLo * dbHi;
    var above = daHi * daHi + dbLo * dbLo - 2 * r * daHi * dbLo;
    return {
      tasks: g, first: pa, second: pb, diff: d, deffs: [ca.deff, cb.deff],
      lo: Math.max(-1, d - Math.sqrt(Math.max(below, 0))),
      hi: Math.min(1, d + Math.sqrt(Math.max(above, 0)))
    };
  }

  /* Mirrors effectbench.metrics.cost_difference; costs are per-task sums, worst per episode. */
  function costDifference(ca, ma, cb, mb, worst, t975) {
    var g = ma.length;
    if (g === 0) return { tasks: 0, diff: 0, lo: -100 * worst, hi: 100 * worst };
    var na = sum(ma), nb = sum(mb);
    var meanA = sum(ca) / na, meanB = sum(cb) / nb;
    var d = meanA - meanB;
    var lo = -worst, hi = worst;
    if (g >= 2) {
      var ss = 0;
      for (var i = 0; i < g; i++) {
        var e = (ca[i] - meanA * ma[i]) / na - (cb[i] - meanB * mb[i]) / nb;
        ss += e * e;
      }
      var half = t975[g - 2] * Math.sqrt(g / (g - 1) * ss);
      lo = Math.max(-worst, d - half);
      hi = Math.min(worst, d + half);
    }
    return { tasks: g, first: 100 * meanA, second: 100 * meanB, diff: 100 * d, lo: 100 * lo, hi: 100 * hi };
  }

  /* Prices from the address (?costs=S,W,H or a preset name is the leaderboard's; here S,W,H). */
  function prices(data) {
    var raw = param("costs");
    var parts = raw.split(",");
    if (parts.length === 3) {
      var w = parts.map(Number);
      var ok = w.every(function (x) { return isFinite(x) && x >= 0 && x <= 1e6; }) && w.some(function (x) { return x > 0; });
      if (ok) return { w: w, note: "" };
      return { w: data.prices, note: "The prices in the address (costs=" + raw + ") are not valid: each must be a number from 0 to 1000000, not all 0. The board's prices are used." };
    }
    return { w: data.prices, note: "" };
  }

  function points(x) {
    var v = (100 * x).toFixed(1);
    if (v === "-0.0") v = "0.0";
    return (x >= 0 && v.charAt(0) !== "-" ? "+" : "") + v;
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function param(name) {
    return new URLSearchParams(window.location.search).get(name) || "";
  }

  /* The chosen pair goes into the address; a reader's choice is a step of the browser's
   * history (Back undoes it), the page's own tidying of the address (replace) is not. */
  function remember(board, a, b, replace) {
    var params = new URLSearchParams();
    if (board) params.set("board", board);
    if (a) params.set("a", a);
    if (b) params.set("b", b);
    if (param("costs")) params.set("costs", param("costs"));
    var query = params.toString();
    var url = window.location.pathname + (query ? "?" + query : "");
    if (url === window.location.pathname + window.location.search) return;
    try {
      if (replace) window.history.replaceState(window.history.state, "", url);
      else window.history.pushState({ eb: true }, "", url);
    } catch (e) { /* the view still works without the link */ }
  }

  function verdictOf(r, better, names) {
    var judged = better === "lower" ? " (worse)" : better === "higher" ? " (better)" : "";
    if (r.tasks === 0) return ["no common task", "eb-cmp-tie"];
    if (r.lo > 0) return [names[0] + " higher" + judged, "eb-cmp-first"];
    if (r.hi < 0) return [names[1] + " higher" + judged, "eb-cmp-second"];
    return ["no difference beyond noise", "eb-cmp-tie"];
  }

  function differenceCell(key, better, r, names, unit) {
    // The verdict names the system with the higher value and says whether that is worse or
    // better for this measure, so a reader never has to recall which direction wins.
    var v = verdictOf(r, better, names);
    var shown = unit === "cost"
      ? [signed(r.diff, 1), "[" + signed(r.lo, 1) + ", " + signed(r.hi, 1) + "]"]
      : [points(r.diff) + " pts", "[" + points(r.lo) + ", " + points(r.hi) + "]"];
    return el("td", {
      "class": "eb-cmp " + v[1],
      "data-metric": key,
      "data-n": String(r.tasks),
      "data-diff": r.diff.toFixed(6),
      "data-lo": r.lo.toFixed(6),
      "data-hi": r.hi.toFixed(6)
    }, [
      el("span", { "class": "eb-p" }, [shown[0]]), " ",
      el("span", { "class": "eb-ci" }, [shown[1]]),
      el("span", { "class": "eb-k" }, [v[0]])
    ]);
  }

  function signed(x, digits) {
    var v = x.toFixed(digits);
    if (Number(v) === 0) v = (0).toFixed(digits);
    return (Number(v) > 0 ? "+" : "") + v;
  }

  function compare(data, first, second, w) {
    var metrics = data.rates;
    var groups = { "": { label: "All paired episodes", idx: [] } };
    var order = [""];
    var unmatched = 0;
    data.episodes.forEach(function (ep, i) {
      var x = first.outcomes.charAt(i);
      var y = second.outcomes.charAt(i);
      if (x === "." || y === ".") {
        if (x !== y) unmatched += 1;
        return;
      }
      var cell = ep[3] + " × " + ep[4];
      if (!groups[cell]) {
        groups[cell] = { label: cell, idx: [] };
        order.push(cell);
      }
      groups[""].idx.push(i);
      groups[cell].idx.push(i);
    });
    var head = order.shift();
    order.sort();
    order.unshift(head);
    var price = { W: w[0] + w[1], P: w[0], A: w[1], O: w[2] };
    var worst = Math.max(w[0] + w[1], w[2]);
    return {
      unmatched: unmatched,
      rows: order.map(function (key) {
        var g = groups[key];
        // per task: its paired episodes and each system's counts
        var byTask = {};
        var tasks = [];
        g.idx.forEach(function (i) {
          var t = data.episodes[i][0];
          if (!byTask[t]) { byTask[t] = []; tasks.push(t); }
          byTask[t].push(i);
        });
        tasks.sort();
        function counts(system, letters) {
          return tasks.map(function (t) {
            var k = 0;
            byTask[t].forEach(function (i) { if (letters.indexOf(system.outcomes.charAt(i)) !== -1) k += 1; });
            return k;
          });
        }
        function costs(system) {
          return tasks.map(function (t) {
            var c = 0;
            byTask[t].forEach(function (i) { c += price[system.outcomes.charAt(i)] || 0; });
            return c;
          });
        }
        var m = tasks.map(function (t) { return byTask[t].length; });
        return {
          key: key,
          label: g.label,
          n: g.idx.length,
          tasks: tasks.length,
          diffs: metrics.map(function (rate) {
            var hit = data.events[rate.key];
            return rateDifference(counts(first, hit), m, counts(second, hit), m);
          }),
          cost: costDifference(costs(first), m, costs(second), m, worst, data.t975)
        };
      })
    };
  }

  function disagreements(data, first, second) {
    var tasks = {};
    var names = [];
    data.episodes.forEach(function (ep, i) {
      var x = first.outcomes.charAt(i);
      var y = second.outcomes.charAt(i);
      if (x === "." || y === ".") return;
      var t = tasks[ep[0]];
      if (!t) {
        t = tasks[ep[0]] = { task: ep[0], cell: ep[3] + " × " + ep[4], first: "", second: "", trials: [], differ: 0 };
        names.push(ep[0]);
      }
      t.first += x;
      t.second += y;
      t.trials.push(ep[1]);
      if (x !== y) t.differ += 1;
    });
    return names.sort().map(function (n) { return tasks[n]; }).filter(function (t) { return t.differ; });
  }

  function render(out, data, first, second) {
    out.textContent = "";
    var names = [first.name, second.name];
    var chosen = prices(data);
    var w = chosen.w;
    var result = compare(data, first, second, w);
    out.appendChild(el("h2", { id: "difference" }, ["Difference: " + names[0] + " minus " + names[1]]));
    if (chosen.note) out.appendChild(el("p", { "class": "eb-price-error", role: "alert" }, [chosen.note]));
    if (result.rows[0].n === 0) {
      out.appendChild(el("p", { "class": "eb-empty", "data-eb": "no-common" }, [
        "These two systems ran no task in common (no episode with the same task, trial and seed), " +
        "so there is nothing to compare."
      ]));
      return;
    }
    out.appendChild(el("p", {}, [
      "Each difference is the first system's value minus the second's over the " +
      result.rows[0].n + " episodes both ran (the same task, trial and seed) on " + result.rows[0].tasks +
      " task" + (result.rows[0].tasks === 1 ? "" : "s") + ", with a 95% interval that pairs the two systems " +
      "task by task and counts tasks, not repeats (each rate's Wilson interval on its effective sample, " +
      "combined by Newcombe's square-and-add; the cost with a task-clustered standard error and Student's t). " +
      "An interval that excludes 0 is a difference beyond noise. Rates are in percentage points; cost is per " +
      "100 tasks at prices " + w.join(", ") + " (silent wrong effect, wrong record, over-halt)." +
      (result.unmatched ? " " + result.unmatched + " episodes ran by only one of them are left out." : "")
    ]));
    /* Every measure's name says which way is better: in the header, and above each number
     * where a narrow screen shows each cell's row as a card. */
    var columns = data.rates.map(function (m) {
      return m.label + (m.better ? " (" + m.better + " is better)" : "");
    });
    columns.push("Cost per 100 tasks (lower is better)");
    var headRow = el("tr", {}, [
      el("th", { scope: "col" }, ["Cell"]), el("th", { scope: "col" }, ["Pairs"]),
      el("th", { scope: "col" }, ["Tasks"])
    ]);
    columns.forEach(function (label) { headRow.appendChild(el("th", { scope: "col" }, [label])); });
    var body = el("tbody", {});
    result.rows.forEach(function (row) {
      var tr = el("tr", { "data-cell": row.key || "all" }, [
        el("th", { scope: "row" }, [row.label]), el("td", { "data-label": "Pairs" }, [String(row.n)]),
        el("td", { "data-label": "Tasks" }, [String(row.tasks)])
      ]);
      row.diffs.forEach(function (r, j) {
        var td = differenceCell(data.rates[j].key, data.rates[j].better, r, names, "rate");
        td.setAttribute("data-label", columns[j]);
        tr.appendChild(td);
      });
      var cost = differenceCell("cost", "lower", row.cost, names, "cost");
      cost.setAttribute("data-label", columns[columns.length - 1]);
      tr.appendChild(cost);
      body.appendChild(tr);
    });
    var table = el("table", { "class": "eb-table eb-cmp-table eb-cards", "data-eb": "compare" }, [
      el("thead", {}, [headRow]), body
    ]);
    out.appendChild(el("div", {
      "class": "eb-scroll eb-cards-box", tabindex: "0", role: "region", "aria-label": "Paired differences"
    }, [table]));

    var tasks = disagreements(data, first, second);
    out.appendChild(el("h2", { id: "disagree" }, ["Tasks where they disagree"]));
    if (!tasks.length) {
      out.appendChild(el("p", { "data-eb": "no-disagreement" }, ["On every paired episode the two systems had the same outcome."]));
      return;
    }
    out.appendChild(el("p", {}, [
      tasks.length + " task" + (tasks.length === 1 ? "" : "s") + " with a different outcome on at least one " +
      "trial. One letter per trial: " + data.legend + "." +
      (linked ? " Each letter opens that trial's two receipts side by side." : "")
    ]));
    var linked = first.receipts && second.receipts;
    /* one letter per trial; with both systems' receipts published, each opens the two episodes
       side by side (episode.html?s=FIRST&t=TASK&n=TRIAL&vs=SECOND) */
    function letters(t, mine, a, b) {
      if (!linked) return [mine];
      return mine.split("").map(function (letter, j) {
        var params = new URLSearchParams();
        params.set("s", a.slug); params.set("t", t.task); params.set("n", String(t.trials[j])); params.set("vs", b.slug);
        return el("a", { href: "episode.html?" + params.toString(), title: t.task + ", trial " + t.trials[j] + ": both receipts side by side" }, [letter]);
      });
    }
    var tbody = el("tbody", {});
    tasks.forEach(function (t) {
      tbody.appendChild(el("tr", { "data-task": t.task }, [
        el("th", { scope: "row" }, [t.task]), el("td", {}, [t.cell]),
        el("td", { "class": "eb-cmp-outcomes" }, letters(t, t.first, first, second)),
        el("td", { "class": "eb-cmp-outcomes" }, letters(t, t.second, second, first)),
        el("td", {}, [String(t.differ)])
      ]));
    });
    out.appendChild(el("div", {
      "class": "eb-scroll", tabindex: "0", role: "region", "aria-label": "Tasks where they disagree"
    }, [el("table", { "class": "eb-table", "data-eb": "disagree" }, [
      el("thead", {}, [el("tr", {}, [
        el("th", { scope: "col" }, ["Task"]), el("th", { scope: "col" }, ["Cell"]),
        el("th", { scope: "col" }, [names[0]]), el("th", { scope: "col" }, [names[1]]),
        el("th", { scope: "col" }, ["Trials that differ"])
      ])]), tbody
    ])]));
  }

  function setUp() {
    var root = document.getElementById("eb-compare");
    if (!root || root.getAttribute("data-eb-ready")) return;
    root.setAttribute("data-eb-ready", "1");
    var all = window.EB_COMPARE || {};
    var boardSelect = document.getElementById("eb-compare-board");
    var firstSelect = document.getElementById("eb-compare-a");
    var secondSelect = document.getElementById("eb-compare-b");
    var out = document.getElementById("eb-compare-result");
    root.hidden = false;

    function fill(select, systems, chosen) {
      select.textContent = "";
      select.appendChild(el("option", { value: "" }, ["choose a system"]));
      var ranked = el("optgroup", { label: "Ranked" });
      var preview = el("optgroup", { label: "Previews (not ranked)" });
      systems.forEach(function (s) {
        var option = el("option", { value: s.slug }, [s.name + (s.rank ? " (rank " + s.rank + ")" : "")]);
        if (s.slug === chosen) option.selected = true;
        (s.status === "ranked" ? ranked : preview).appendChild(option);
      });
      if (ranked.children.length) select.appendChild(ranked);
      if (preview.children.length) select.appendChild(preview);
    }

    function find(data, slug) {
      for (var i = 0; i < data.systems.length; i++) if (data.systems[i].slug === slug) return data.systems[i];
      return null;
    }

    function own(key) { return Object.prototype.hasOwnProperty.call(all, key); }

    function show(boardKey, a, b, replace) {
      var data = own(boardKey) ? all[boardKey] : null;  /* never __proto__ or constructor */
      if (!data) return;
      boardSelect.value = boardKey;
      fill(firstSelect, data.systems, a);
      fill(secondSelect, data.systems, b);
      var first = find(data, a);
      var second = find(data, b);
      remember(boardKey, first ? a : "", second ? b : "", replace);
      out.textContent = "";
      if (!first || !second) {
        out.appendChild(el("p", { "class": "eb-empty" }, ["Choose two systems of this board."]));
      } else if (first === second) {
        out.appendChild(el("p", { "class": "eb-empty" }, ["Choose two different systems."]));
      } else {
        render(out, data, first, second);
      }
    }

    var keys = Object.keys(all);
    function fromAddress() {
      var boardKey = own(param("board")) ? param("board") : keys[0];
      if (boardKey) show(boardKey, param("a"), param("b"), true);
    }
    boardSelect.addEventListener("change", function () { show(boardSelect.value, "", ""); });
    firstSelect.addEventListener("change", function () { show(boardSelect.value, firstSelect.value, secondSelect.value); });
    secondSelect.addEventListener("change", function () { show(boardSelect.value, firstSelect.value, secondSelect.value); });
    window.addEventListener("popstate", fromAddress);  /* Back and Forward */
    fromAddress();
  }

  /* leaderboard.js (on every page) runs the page's set-ups once the page is ready. */
  (window.EB_SETUP = window.EB_SETUP || []).push(setUp);
})();
