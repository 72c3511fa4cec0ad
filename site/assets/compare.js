/* EffectBench compare view: two systems of one board, episode by episode.
 *
 * Data: every board's compare file (compare/KEY.js) sets EB_COMPARE[KEY] = {episodes, systems,
 * events}: the paired episodes (task, trial, seed, category, substrate), one outcome letter per
 * episode and system ("." when a system did not run it), and which letters count for each rate.
 * For each rate, in total and per (category x substrate) cell, the view shows the difference of
 * the first system's rate minus the second's over the episodes both ran, with Newcombe's hybrid
 * score interval for paired proportions (1998, method 10). The formula is
 * effectbench.metrics.paired_difference, evaluated here in the browser; a test holds the two equal.
 * The chosen board and pair live in the URL (?board=KEY&a=SLUG&b=SLUG).
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
    return [centre - half, centre + half];
  }

  /* Newcombe (1998) method 10; mirrors effectbench.metrics.paired_difference. */
  function pairedDifference(a, b, c, d) {
    var n = a + b + c + d;
    if (n === 0) return { n: 0, diff: 0, lo: -1, hi: 1 };
    var p1 = (a + b) / n;
    var p2 = (a + c) / n;
    var w1 = wilson(a + b, n);
    var w2 = wilson(a + c, n);
    var margins = (a + b) * (c + d) * (a + c) * (b + d);
    var phi = 0;
    if (margins > 0) {
      var cross = a * d - b * c;
      if (cross > n / 2) phi = (cross - n / 2) / Math.sqrt(margins);
      else if (cross < 0) phi = cross / Math.sqrt(margins);
    }
    var diff = p1 - p2;
    var below = Math.pow(p1 - w1[0], 2) - 2 * phi * (p1 - w1[0]) * (w2[1] - p2) + Math.pow(w2[1] - p2, 2);
    var above = Math.pow(w1[1] - p1, 2) - 2 * phi * (w1[1] - p1) * (p2 - w2[0]) + Math.pow(p2 - w2[0], 2);
    return {
      n: n,
      both: a,
      firstOnly: b,
      secondOnly: c,
      diff: diff,
      lo: Math.max(-1, diff - Math.sqrt(Math.max(below, 0))),
      hi: Math.min(1, diff + Math.sqrt(Math.max(above, 0)))
    };
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

  function remember(board, a, b) {
    var params = new URLSearchParams();
    if (board) params.set("board", board);
    if (a) params.set("a", a);
    if (b) params.set("b", b);
    var query = params.toString();
    try {
      window.history.replaceState(window.history.state, "",
        window.location.pathname + (query ? "?" + query : ""));
    } catch (e) { /* the view still works without the link */ }
  }

  function differenceCell(rate, r, names) {
    // The verdict names the system with the higher rate and says whether that is worse or
    // better for this rate, so a reader never has to recall which direction wins.
    var verdict = "no difference beyond noise";
    var cls = "eb-cmp-tie";
    var judged = rate.better === "lower" ? " (worse)" : rate.better === "higher" ? " (better)" : "";
    if (r.n === 0) {
      verdict = "no paired episodes";
    } else if (r.lo > 0) {
      verdict = names[0] + " higher" + judged;
      cls = "eb-cmp-first";
    } else if (r.hi < 0) {
      verdict = names[1] + " higher" + judged;
      cls = "eb-cmp-second";
    }
    return el("td", {
      "class": "eb-cmp " + cls,
      "data-metric": rate.key,
      "data-n": String(r.n),
      "data-diff": r.diff.toFixed(6),
      "data-lo": r.lo.toFixed(6),
      "data-hi": r.hi.toFixed(6)
    }, [
      el("span", { "class": "eb-p" }, [points(r.diff) + " pts"]), " ",
      el("span", { "class": "eb-ci" }, ["[" + points(r.lo) + ", " + points(r.hi) + "]"]),
      el("span", { "class": "eb-k" }, [verdict])
    ]);
  }

  function compare(data, first, second) {
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
    return {
      unmatched: unmatched,
      rows: order.map(function (key) {
        var g = groups[key];
        return {
          key: key,
          label: g.label,
          n: g.idx.length,
          diffs: metrics.map(function (m) {
            var hit = data.events[m.key];
            var a = 0, b = 0, c = 0, d = 0;
            g.idx.forEach(function (i) {
              var x = hit.indexOf(first.outcomes.charAt(i)) !== -1;
              var y = hit.indexOf(second.outcomes.charAt(i)) !== -1;
              if (x && y) a += 1;
              else if (x) b += 1;
              else if (y) c += 1;
              else d += 1;
            });
            return pairedDifference(a, b, c, d);
          })
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
        t = tasks[ep[0]] = { task: ep[0], cell: ep[3] + " × " + ep[4], first: "", second: "", differ: 0 };
        names.push(ep[0]);
      }
      t.first += x;
      t.second += y;
      if (x !== y) t.differ += 1;
    });
    return names.sort().map(function (n) { return tasks[n]; }).filter(function (t) { return t.differ; });
  }

  function render(out, data, first, second) {
    out.textContent = "";
    var names = [first.name, second.name];
    var result = compare(data, first, second);
    out.appendChild(el("h2", { id: "difference" }, ["Difference: " + names[0] + " minus " + names[1]]));
    out.appendChild(el("p", {}, [
      "Each difference is the first system's rate minus the second's over the " +
      result.rows[0].n + " episodes both ran (the same task, trial and seed), in percentage points, " +
      "with its 95% paired interval (Newcombe's hybrid score method). An interval that excludes 0 " +
      "is a difference beyond noise." +
      (result.unmatched ? " " + result.unmatched + " episodes ran by only one of them are left out." : "")
    ]));
    var headRow = el("tr", {}, [el("th", { scope: "col" }, ["Episodes"]), el("th", { scope: "col" }, ["Pairs"])]);
    data.rates.forEach(function (m) {
      headRow.appendChild(el("th", { scope: "col" }, [m.label + " (" + m.better + " is better)"]));
    });
    var body = el("tbody", {});
    result.rows.forEach(function (row) {
      var tr = el("tr", { "data-cell": row.key || "all" }, [
        el("th", { scope: "row" }, [row.label]), el("td", {}, [String(row.n)])
      ]);
      row.diffs.forEach(function (r, j) { tr.appendChild(differenceCell(data.rates[j], r, names)); });
      body.appendChild(tr);
    });
    var table = el("table", { "class": "eb-table eb-cmp-table", "data-eb": "compare" }, [
      el("thead", {}, [headRow]), body
    ]);
    out.appendChild(el("div", {
      "class": "eb-scroll", tabindex: "0", role: "region", "aria-label": "Paired differences"
    }, [table]));

    var tasks = disagreements(data, first, second);
    out.appendChild(el("h2", { id: "disagree" }, ["Tasks where they disagree"]));
    if (!tasks.length) {
      out.appendChild(el("p", { "data-eb": "no-disagreement" }, ["On every paired episode the two systems had the same outcome."]));
      return;
    }
    out.appendChild(el("p", {}, [
      tasks.length + " task" + (tasks.length === 1 ? "" : "s") + " with a different outcome on at least one " +
      "trial. One letter per trial: " + data.legend + "."
    ]));
    var tbody = el("tbody", {});
    tasks.forEach(function (t) {
      tbody.appendChild(el("tr", { "data-task": t.task }, [
        el("th", { scope: "row" }, [t.task]), el("td", {}, [t.cell]),
        el("td", { "class": "eb-cmp-outcomes" }, [t.first]), el("td", { "class": "eb-cmp-outcomes" }, [t.second]),
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

    function show(boardKey, a, b) {
      var data = own(boardKey) ? all[boardKey] : null;  /* never __proto__ or constructor */
      if (!data) return;
      boardSelect.value = boardKey;
      fill(firstSelect, data.systems, a);
      fill(secondSelect, data.systems, b);
      var first = find(data, a);
      var second = find(data, b);
      remember(boardKey, first ? a : "", second ? b : "");
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
    var boardKey = own(param("board")) ? param("board") : keys[0];
    boardSelect.addEventListener("change", function () { show(boardSelect.value, "", ""); });
    firstSelect.addEventListener("change", function () { show(boardSelect.value, firstSelect.value, secondSelect.value); });
    secondSelect.addEventListener("change", function () { show(boardSelect.value, firstSelect.value, secondSelect.value); });
    if (boardKey) show(boardKey, param("a"), param("b"));
  }

  /* leaderboard.js (on every page) runs the page's set-ups once the page is ready. */
  (window.EB_SETUP = window.EB_SETUP || []).push(setUp);
})();
