/* EffectBench leaderboard: sortable (vendored tablesort) and filterable boards, offline.
 * Runs on every page load, including Material's instant navigation (document$). */
(function () {
  "use strict";

  function setUpBoards() {
    document.querySelectorAll("table[data-eb-sortable]").forEach(function (table) {
      if (table.dataset.ebReady) return;
      table.dataset.ebReady = "1";
      // Rows arrive sorted by SWER from the build; tablesort then owns the header clicks.
      new Tablesort(table);
    });
    document.querySelectorAll("input[data-eb-filter]").forEach(function (input) {
      if (input.dataset.ebReady) return;
      input.dataset.ebReady = "1";
      var table = document.getElementById(input.dataset.ebFilter);
      var count = document.querySelector('[data-eb-count="' + input.dataset.ebFilter + '"]');
      if (!table) return;
      var rows = Array.prototype.slice.call(table.tBodies[0].rows);
      var text = rows.map(function (row) { return row.textContent.toLowerCase(); });
      input.addEventListener("input", function () {
        var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
        var shown = 0;
        rows.forEach(function (row, i) {
          var keep = words.every(function (w) { return text[i].indexOf(w) !== -1; });
          row.hidden = !keep;
          if (keep) shown += 1;
        });
        if (count) count.textContent = words.length ? shown + " of " + rows.length + " shown" : "";
      });
    });
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(setUpBoards);
  } else {
    document.addEventListener("DOMContentLoaded", setUpBoards);
  }
})();
