/* EffectBench compare view: two systems of one board, episode by episode, counted by task.
 *
 * Data: every board's compare file (compare/KEY.js, one per substrate board) sets
 * EB_COMPARE[KEY] = {episodes, systems, parts, events, prices, min_tasks, t95} (the episodes at least two
 * systems ran; each system's letters over them and how many episodes it ran); a board with more
 * systems than that file holds has parts (compare/KEY-N.js, EB_COMPARE_MORE["KEY/N"] = {systems}),
 * loaded with the leaderboard script's EB_PARTS the first time the board is shown. The data: the paired episodes (task,
 * trial, seed, category, substrate), one outcome letter per episode and system ("." when a
 * system did not run it), which letters count for each rate, the board's prices, Student's t at 95% by
 * degrees of freedom (t95) and the fewest
 * common tasks a difference needs to be beyond noise. Every system is named with the substrate
 * of its board.
 * For each rate, in total and per (category x substrate) cell, the view shows the first system's
 * rate minus the second's over the episodes both ran, with a paired, task-clustered 95% interval:
 * each rate's Wilson interval on its Rao-Scott effective sample (the design effect from the
 * spread of its per-task counts), combined by Newcombe's square-and-add corrected for the
 * correlation of the two rates across tasks. The net value per 100 tasks is differenced the same
 * way over both systems' success, SWER, record-wrong and over-halt, weighted by the prices. The
 * formulas are effectbench.metrics.rate_difference and value_difference, evaluated here by the
 * leaderboard script's EB_STATS; a test holds the two equal. The chosen board and pair live in
 * the URL (?board=KEY&a=SLUG&b=SLUG); prices in ?costs=SILENT,WRONG,HALT&value=V (as on the
 * leaderboard).
 */
(function () {
  "use strict";

  function stats() { return window.EB_STATS; }

  /* Prices from the address, read as the leaderboard reads them (a preset name or three harms,
   * and the value of a correct effect); the board's own when the address names none or bad ones. */
  function prices(data) {
    var costs = param("costs"), value = param("value");
    var own = { value: data.prices[0], silent: data.prices[1], wrong: data.prices[2], halt: data.prices[3] };
    if (!costs && !value) return { w: own, note: "" };
    var parsed = stats().parsePrices(costs || null, value || null, data.price_rules);
    if (parsed.error) {
      return { w: own, note: "The prices in the address were not used: " + parsed.error + ". The board's prices are used." };
    }
    return { w: parsed.w, note: "" };
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
    if (param("value")) params.set("value", param("value"));
    var query = params.toString();
    var url = window.location.pathname + (query ? "?" + query : "");
    if (url === window.location.pathname + window.location.search) return;
    try {
      if (replace) window.history.replaceState(window.history.state, "", url);
      else window.history.pushState({ eb: true }, "", url);
    } catch (e) { /* the view still works without the link */ }
  }

  function verdictOf(r, better, names, least) {
    var judged = better === "lower" ? " (worse)" : better === "higher" ? " (better)" : "";
    if (r.tasks === 0) return ["no common task", "eb-cmp-tie"];
    if (r.tasks < least) return ["too few common tasks to tell (" + r.tasks + " of the " + least + " needed)", "eb-cmp-tie"];
    if (r.lo > 0) return [names[0] + " higher" + judged, "eb-cmp-first"];
    if (r.hi < 0) return [names[1] + " higher" + judged, "eb-cmp-second"];
    return ["no difference beyond noise", "eb-cmp-tie"];
  }

  function differenceCell(key, better, r, names, unit, least) {
    // The verdict names the system with the higher value and says whether that is worse or
    // better for this measure, so a reader never has to recall which direction wins.
    var v = verdictOf(r, better, names, least);
    var shown = unit === "value"
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
    var both = 0;
    data.episodes.forEach(function (ep, i) {
      var x = first.outcomes.charAt(i);
      var y = second.outcomes.charAt(i);
      if (x === "." || y === ".") return;
      both += 1;
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
    var S = stats();
    return {
      unmatched: first.ran + second.ran - 2 * both,  /* the episodes only one of them ran */
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
        function valueCounts(system) {
          return data.value_events.map(function (rate) { return counts(system, data.events[rate]); });
        }
        var m = tasks.map(function (t) { return byTask[t].length; });
        return {
          key: key,
          label: g.label,
          n: g.idx.length,
          tasks: tasks.length,
          diffs: metrics.map(function (rate) {
            var hit = data.events[rate.key];
            return S.rateDifference(counts(first, hit), m, counts(second, hit), m, data.t95);
          }),
          value: S.valueDifference(valueCounts(first), m, valueCounts(second), m, w, data.t95)
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
    var names = [first.label, second.label];
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
      "combined by Newcombe's square-and-add; net value from all four rates it weighs, the same way). " +
      "An interval that excludes 0 on at least " + data.min_tasks + " common tasks is a difference beyond noise. " +
      "Rates are in percentage points; net value is per 100 tasks at prices: correct effect " + w.value +
      ", silent wrong effect " + w.silent + ", wrong record " + w.wrong + ", over-halt " + w.halt + "." +
      (result.unmatched ? " " + result.unmatched + " episodes ran by only one of them are left out." : "")
    ]));
    /* Every measure's name says which way is better: in the header, and above each number
     * where a narrow screen shows each cell's row as a card. */
    var columns = data.rates.map(function (m) {
      return m.label + (m.better ? " (" + m.better + " is better)" : "");
    });
    columns.push("Net value per 100 tasks (higher is better)");
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
        var td = differenceCell(data.rates[j].key, data.rates[j].better, r, names, "rate", data.min_tasks);
        td.setAttribute("data-label", columns[j]);
        tr.appendChild(td);
      });
      var value = differenceCell("value", "higher", row.value, names, "value", data.min_tasks);
      value.setAttribute("data-label", columns[columns.length - 1]);
      tr.appendChild(value);
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
        var option = el("option", { value: s.slug }, [s.label + (s.rank ? " (rank " + s.rank + ")" : "")]);
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

    /* The rest of a board's systems, from its parts (once); null when every one is in. */
    var loading = {};
    function complete(key, data) {
      if (!data.parts) return null;
      if (!loading[key]) {
        loading[key] = window.EB_PARTS("compare", "EB_COMPARE_MORE", key, data.parts).then(function (parts) {
          parts.forEach(function (part) { data.systems = data.systems.concat(part.systems); });
          data.parts = 0;
        });
      }
      return loading[key];
    }

    var latest = 0;  /* only the last choice is drawn once its board's systems are in */
    var waiting = 0;  /* loads under way: the result says aria-busy while there is one */
    function show(boardKey, a, b, replace) {
      var data = own(boardKey) ? all[boardKey] : null;  /* never __proto__ or constructor */
      if (!data) return;
      var pending = complete(boardKey, data);
      var mine = ++latest;
      if (pending) {
        waiting += 1;
        out.setAttribute("aria-busy", "true");
        pending.then(function () {
          if (mine === latest) show(boardKey, a, b, replace);
        }, function (error) {
          if (mine !== latest) return;
          out.textContent = "";
          out.appendChild(el("p", { "class": "eb-empty" }, ["This board's systems did not load (" + error.message + ")."]));
        }).then(function () {
          waiting -= 1;
          if (!waiting) out.removeAttribute("aria-busy");
        });
        return;
      }
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
