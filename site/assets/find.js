/* EffectBench system finder: the submission pages, found by the system's name from the search box.
 *
 * Submission pages stay out of the theme's search index (it is loaded whole on every page). The
 * build writes a finder index in buckets instead (effectbench.site._find): a manifest
 * (search/systems-0.js: the word separator, each bucket's number of parts) and, per bucket, the
 * [name, slug, detail] of every system with a word whose first two characters are the bucket's
 * key (search/systems/HEX-N.js, HEX the key's UTF-8 bytes). On the first query the manifest is
 * loaded; each query then loads the one bucket of its most selective word (a word of two
 * characters or more) and lists, above the theme's results, the systems whose name has a word
 * starting with each word typed: the exact name first, then shorter names (Enter opens the exact
 * name's page, else the theme's best page). Names are shown as text, never as markup. Nothing is fetched before a reader types, and no request leaves the site.
 */
(function () {
  "use strict";

  var LIMIT = 10;
  var input = document.querySelector("form[name=search] input[name=query]");
  var result = document.querySelector("[data-md-component=search-result]");
  if (!input || !result || !window.EB_PARTS) return;

  var base = ".";
  try {
    base = JSON.parse(document.getElementById("__config").textContent).base || ".";
  } catch (e) {
    /* no theme configuration: the page is at the site's root */
  }

  var box = document.createElement("div");
  box.className = "eb-find";
  box.setAttribute("data-eb-find", "");
  box.hidden = true;
  var meta = document.createElement("p");
  meta.className = "eb-find__meta";
  meta.setAttribute("aria-live", "polite");
  var list = document.createElement("ol");
  list.className = "eb-find__list";
  box.appendChild(meta);
  box.appendChild(list);
  result.insertBefore(box, result.firstChild);

  var manifest = null;
  function index() {
    if (!manifest) {
      manifest = window.EB_PARTS(base + "/search", "EB_FIND", "systems", 1).then(function (parts) {
        return parts[0];
      });
    }
    return manifest;
  }

  function hex(text) {
    return Array.prototype.map.call(new TextEncoder().encode(text), function (b) {
      return (b < 16 ? "0" : "") + b.toString(16);
    }).join("");
  }

  function words(text, separator) {
    return text.toLowerCase().split(separator).filter(Boolean);
  }

  /* The systems whose names match the words, best first. */
  function matches(entries, wanted, separator) {
    var exact = wanted.join(" ");
    var found = [];
    entries.forEach(function (e) {
      var own = words(e[0], separator);
      var every = wanted.every(function (w) {
        return own.some(function (o) { return o.lastIndexOf(w, 0) === 0; });
      });
      if (every) found.push({ e: e, exact: own.join(" ") === exact ? 0 : 1, n: own.length });
    });
    found.sort(function (a, b) {
      return a.exact - b.exact || a.n - b.n || a.e[0].length - b.e[0].length ||
        (a.e[0] < b.e[0] ? -1 : a.e[0] > b.e[0] ? 1 : 0) || (a.e[1] < b.e[1] ? -1 : 1);
    });
    return found.map(function (f) {
      return { name: f.e[0], slug: f.e[1], detail: f.e[2], exact: f.exact === 0 };
    });
  }

  /* Show what answers the query text (found: the matches; null: no list for it). */
  function show(text, found) {
    list.textContent = "";
    box.setAttribute("data-eb-query", text);
    if (found === null) { box.hidden = true; return; }
    found.slice(0, LIMIT).forEach(function (e) {
      var item = document.createElement("li");
      item.className = "eb-find__item";
      var link = document.createElement("a");
      link.className = "eb-find__link";
      link.href = base + "/submissions/" + encodeURIComponent(e.slug) + ".html";
      var name = document.createElement("span");
      name.className = "eb-find__name";
      name.textContent = e.name;
      /* The theme's Enter opens the result whose first child scores highest: the exact name
       * outranks every page, any other system none. */
      name.setAttribute("data-md-score", e.exact ? "1e9" : "0");
      var detail = document.createElement("span");
      detail.className = "eb-find__detail";
      detail.textContent = e.detail;
      link.appendChild(name);
      link.appendChild(detail);
      item.appendChild(link);
      list.appendChild(item);
    });
    var n = found.length;
    meta.textContent = n === 0 ? "No system's name matches" :
      n === 1 ? "1 system" :
      n <= LIMIT ? n + " systems" : n + " systems, the first " + LIMIT + " shown: add a word to narrow them";
    box.hidden = false;
  }

  var latest = 0;
  function query() {
    var ticket = ++latest;
    var text = input.value.trim();
    if (!text) { show(text, null); return; }
    index().then(function (m) {
      var separator = new RegExp(m.separator);
      var wanted = words(text, separator);
      /* the bucket of the word with the fewest parts (ties: the longest word) */
      var best = null;
      wanted.forEach(function (w) {
        var chars = Array.from(w);
        if (chars.length < m.key_chars) return;
        var key = hex(chars.slice(0, m.key_chars).join(""));
        var parts = Object.prototype.hasOwnProperty.call(m.buckets, key) ? m.buckets[key] : 0;
        if (!best || parts < best.parts || (parts === best.parts && chars.length > best.length)) {
          best = { key: key, parts: parts, length: chars.length };
        }
      });
      if (!best) return null;  /* only one-letter words: the theme's search answers alone */
      if (best.parts === 0) return [];
      return window.EB_PARTS(base + "/search/systems", "EB_FIND_PART", best.key, best.parts).then(
        function (parts) { return matches([].concat.apply([], parts), wanted, separator); }
      );
    }).then(function (found) {
      if (ticket === latest) show(text, found);
    }, function () {
      if (ticket === latest) show(text, null);
    });
  }

  input.addEventListener("input", query);
  /* the theme's reset button clears the box without an input event */
  if (input.form) input.form.addEventListener("reset", function () { latest++; show("", null); });
  input.addEventListener("focus", function () { if (input.value.trim()) query(); });
})();
