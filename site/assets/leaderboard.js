/* EffectBench leaderboard: sorting, filtering and substrate views of the boards, kept in the URL.
 *
 * The build writes every board in its default order (SWER, then over-halt, then system name)
 * and marks each row with that position (data-order). Nothing is re-sorted on load unless the
 * URL asks for another order, so the order with JavaScript equals the order without it and in
 * the downloads. Every sort breaks ties by that default order, in both directions.
 * The first click on a column sorts it best-first (data-eb-first), even on the column the
 * default order already sorts by; the next click on it reverses it.
 * State lives in the query string (sort-KEY=column.dir, filter-KEY=text, substrate-KEY=name),
 * so a shared link opens the same view. No request leaves the page.
 */
(function () {
  "use strict";

  function param(name) {
    return new URLSearchParams(window.location.search).get(name);
  }

  function setParams(changes) {
    var params = new URLSearchParams(window.location.search);
    Object.keys(changes).forEach(function (name) {
      if (changes[name]) params.set(name, changes[name]);
      else params.delete(name);
    });
    var query = params.toString();
    var url = window.location.pathname + (query ? "?" + query : "") + window.location.hash;
    try {
      window.history.replaceState(window.history.state, "", url);
    } catch (e) {
      /* a browser that refuses to rewrite this URL keeps the view without the link */
    }
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
    this.filter = document.querySelector('input[data-eb-filter="' + this.key + '"]');
    this.count = document.querySelector('[data-eb-count="' + this.key + '"]');
    this.substrate = document.querySelector('select[data-eb-substrate="' + this.key + '"]');
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
    this.bodies().forEach(function (body) {
      var rows = Array.prototype.slice.call(body.rows).map(function (row) {
        return { row: row, value: value(row), order: parseInt(row.getAttribute("data-order"), 10) };
      });
      rows.sort(function (a, b) {
        var d = 0;
        if (a.value < b.value) d = -1;
        else if (a.value > b.value) d = 1;
        return d * sign || a.order - b.order;
      });
      rows.forEach(function (r) { body.appendChild(r.row); });
    });
    this.headers.forEach(function (h) {
      if (h === th) h.setAttribute("aria-sort", sign < 0 ? "descending" : "ascending");
      else h.removeAttribute("aria-sort");
    });
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
      Array.prototype.forEach.call(body.rows, function (row) {
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

  Board.prototype.remember = function () {
    var changes = {};
    var sorted = this.column !== this.defaultColumn || this.dir !== this.defaultDir;
    changes["sort-" + this.key] = sorted ? this.column + "." + this.dir : "";
    changes["filter-" + this.key] = this.query;
    changes["substrate-" + this.key] = this.view;
    setParams(changes);
  };

  Board.prototype.restore = function () {
    var sort = param("sort-" + this.key);
    if (sort) {
      var parts = sort.split(".");
      if (this.header(parts[0])) {
        this.column = parts[0];
        this.clicked = parts[0];
        this.dir = parts[1] === "desc" ? "desc" : "asc";
        this.sortRows();
      }
    }
    this.view = param("substrate-" + this.key) || "";
    this.showView();
    this.query = param("filter-" + this.key) || "";
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
        board.remember();
      });
    });
    if (this.filter) {
      this.filter.addEventListener("input", function () {
        board.query = board.filter.value;
        board.applyFilter();
        board.remember();
      });
    }
    if (this.substrate) {
      this.substrate.closest("[hidden]") && this.substrate.closest("[hidden]").removeAttribute("hidden");
      this.substrate.addEventListener("change", function () {
        board.view = board.substrate.value;
        board.showView();
        board.applyFilter();
        board.remember();
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
    document.querySelectorAll("table[data-eb-board]").forEach(function (table) {
      if (table.getAttribute("data-eb-ready")) return;
      table.setAttribute("data-eb-ready", "1");
      var board = new Board(table);
      board.listen();
      board.restore();
    });
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
