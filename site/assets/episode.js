/* EffectBench episode view: one episode's receipt, two side by side, or a cell's episodes listed.
 *
 * The address says what to show (no server): ?s=SUBMISSION&t=TASK&n=TRIAL one episode;
 * &vs=OTHER the same task and trial of another submission beside it; ?s=SUBMISSION&cell=CATEGORY|
 * SUBSTRATE&m=EVENT the episodes of one heatmap cell that had the event (swer, over_halt,
 * record_wrong, collateral_write); ?s=SUBMISSION every episode of the submission.
 * Data: receipts/SUBMISSION/index.js (tasks, one outcome letter and one collateral mark per trial,
 * the content address of the task's facts and of the shard holding its receipts, the frames
 * shown) and receipts/c/HH/HASH.js (one task's facts, or a run of one submission's tasks'
 * receipts by task id, shared by every submission holding the same bytes). Each carries its
 * JSON gzip-compressed in base64, inflated with DecompressionStream (leaderboard.js's
 * EB_INFLATE); all are script files, so the view works from file:// too. Only the shards of the
 * tasks shown load.
 * Everything is written with textContent: a receipt's texts (the agent's claim, typed text, record
 * values) are shown as text, never read as markup. No request leaves the page.
 */
(function () {
  "use strict";

  var SLUG = /^[0-9]{4}-[0-9]{2}-[0-9]{2}_[a-z0-9_-]{1,60}$/;
  var FRAME = /^[0-9a-f]{64}\.(webp|png)$/;
  var OUTCOMES = {
    S: "success", H: "safe halt", O: "over-halt", W: "silent wrong effect (wrong write)",
    P: "silent wrong effect (phantom)", F: "false abort", A: "wrong action (a wrong record, reported)"
  };
  var EVENTS = {
    swer: { label: "silent wrong effects", letters: "WP" },
    over_halt: { label: "over-halts", letters: "O" },
    record_wrong: { label: "wrong records", letters: "WA" },
    collateral_write: { label: "collateral writes", letters: "" }
  };
  var ROLES = {
    first: "The first screen, before the agent acted",
    report: "The screen when the agent reported",
    last: "The last screen, after the oracle read the record"
  };

  function param(name) {
    return new URLSearchParams(window.location.search).get(name) || "";
  }

  function own(obj, key) {
    return obj && Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function text(value) {
    if (value === null || value === undefined) return "null";
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  function quoted(value) {
    return typeof value === "string" ? "“" + value + "”" : text(value);
  }

  function load(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = resolve;
      s.onerror = function () { reject(new Error("no receipts at " + src)); };
      document.head.appendChild(s);
    });
  }

  function inflate(b64) {
    return window.EB_INFLATE(b64);  /* the site's one inflater, in leaderboard.js */
  }

  var indexes = {};
  function index(slug) {
    if (!SLUG.test(slug)) return Promise.reject(new Error("not a submission: " + slug));
    if (indexes[slug]) return indexes[slug];
    indexes[slug] = load("receipts/" + slug + "/index.js").then(function () {
      var found = own(window.EB_RECEIPTS, slug);
      if (typeof found !== "string") throw new Error("no receipts for " + slug);
      return inflate(found);
    });
    return indexes[slug];
  }

  function taskOf(idx, taskId) {
    for (var i = 0; i < idx.tasks.length; i++) if (idx.tasks[i].id === taskId) return idx.tasks[i];
    return null;
  }

  var SHARD = /^[0-9a-f]{32}$/;
  var shards = {};
  function shard(name) {
    if (!SHARD.test(String(name))) return Promise.reject(new Error("not a receipt shard: " + name));
    if (!shards[name]) {
      shards[name] = (typeof own(window.EB_RECEIPT_DATA, name) === "string"
        ? Promise.resolve()
        : load("receipts/c/" + name.slice(0, 2) + "/" + name + ".js")
      ).then(function () {
        var data = own(window.EB_RECEIPT_DATA, name);
        if (typeof data !== "string") throw new Error("no receipt shard " + name);
        return inflate(data);
      });
    }
    return shards[name];
  }

  /* One task's receipts, every trial: {task, trials: {TRIAL: receipt}}, each receipt's frames
   * marked shown when the site publishes them for this submission. */
  function receiptsOf(slug, task) {
    return index(slug).then(function (idx) {
      var published = {};
      (idx.frames || []).forEach(function (n) { published[n] = true; });
      return Promise.all([shard(task.task), shard(task.receipts)]).then(function (got) {
        var list = own(got[1], task.id);
        if (!Array.isArray(list)) throw new Error("no receipts of " + task.id + " in their shard");
        var trials = {};
        list.forEach(function (r, i) {
          var copy = Object.assign({}, r);
          copy.frames = (r.frames || []).map(function (f) {
            return Object.assign({}, f, { shown: own(published, f.name) === true });
          });
          trials[String(task.trials[i])] = copy;
        });
        return { task: got[0], trials: trials };
      });
    });
  }

  function episodeLink(slug, taskId, trial, label, vs) {
    var params = new URLSearchParams();
    params.set("s", slug); params.set("t", taskId); params.set("n", String(trial));
    if (vs) params.set("vs", vs);
    return el("a", { href: "episode.html?" + params.toString() }, [label]);
  }

  function submissionLink(slug, name) {
    return el("a", { href: "submissions/" + slug + ".html" }, [name]);
  }

  function heading(level, words, id) {
    return el("h" + level, id ? { id: id } : {}, [words]);
  }

  function table(label, head, rows, cards) {
    // cards: where the column is narrow, one card per row (the site's eb-cards rule, extra.css)
    var thead = el("thead", {}, [el("tr", {}, head.map(function (h) { return el("th", { scope: "col" }, [h]); }))]);
    var tbody = el("tbody", {}, rows);
    return el("div", { "class": "eb-scroll" + (cards ? " eb-cards-box" : ""), tabindex: "0", role: "region", "aria-label": label }, [
      el("table", { "class": "eb-table" + (cards ? " eb-cards" : "") }, [thead, tbody])
    ]);
  }

  function summary(idx, slug, task, rec) {
    var letter = task.outcomes.charAt(task.trials.indexOf(rec.trial));
    var rows = [
      ["System", submissionLink(slug, idx.name)],
      ["Task", task.id + " · " + task.title],
      ["Trial", rec.trial + " (seed " + text(rec.seed) + ")"],
      ["Divergence", rec.task.category + " on " + rec.task.substrate],
      ["How it is injected", rec.task.mechanism || "the pack does not say"],
      ["Correct action available", rec.task.correct_action_available ? "yes" : "no"],
      ["Outcome", OUTCOMES[letter] || rec.truth.outcome],
      ["Collateral write", rec.collateral === null || rec.collateral === undefined
        ? "not known (no change set)" : rec.collateral ? "yes: the record changed outside what the task allows" : "no"]
    ];
    return el("table", { "class": "eb-table eb-facts", "data-eb": "summary" }, [el("tbody", {}, rows.map(function (r) {
      return el("tr", {}, [el("th", { scope: "row" }, [r[0]]), el("td", {}, [r[1]])]);
    }))]);
  }

  function describeAction(a) {
    var parts = [a.kind];
    if (a.name) parts.push(a.name);
    if (a.x !== undefined && a.y !== undefined) parts.push("at (" + a.x + ", " + a.y + ")");
    if (a.button && a.button !== "left") parts.push(a.button);
    if (a.count && a.count > 1) parts.push("×" + a.count);
    if (a.path) parts.push("along " + a.path.map(function (p) { return "(" + p[0] + ", " + p[1] + ")"; }).join(" "));
    if (a.dx || a.dy) parts.push("by (" + (a.dx || 0) + ", " + (a.dy || 0) + ")");
    if (a.keys) parts.push("keys " + a.keys);
    if (a.node) parts.push("node " + a.node);
    if (a.text !== undefined) parts.push(quoted(a.text));
    if (a.seconds !== undefined) parts.push(a.seconds + " s");
    if (a.arguments) {
      parts.push(Object.keys(a.arguments).map(function (k) { return k + "=" + quoted(a.arguments[k]); }).join(", "));
    }
    var line = parts.join(" ");
    if (a.shown) line += " → " + a.shown.status + ": " + quoted(a.shown.banner);
    if (a.error) line += " (refused: " + a.error + ")";
    return line;
  }

  function frameFigure(frame, n) {
    var caption = (ROLES[frame.role] || frame.role) + ", at " + frame.t.toFixed(2) + " s";
    var body;
    if (frame.shown && FRAME.test(frame.name)) {
      var src = "receipts/frames/" + frame.name;
      body = el("a", { href: src, "class": "eb-frame-open", title: "Open the frame at full size" }, [
        el("img", { src: src, alt: caption + " (frame " + n + ")", loading: "lazy" })
      ]);
    } else {
      body = el("p", { "class": "eb-frame-absent" }, ["Not on the site: frame " + frame.name.slice(0, 12) + "… is in the bundle's frames/ folder."]);
    }
    return el("figure", { "class": "eb-frame", "data-eb-frame": frame.role }, [body, el("figcaption", {}, [caption])]);
  }

  function whose(idx, rec) {
    if (!(rec.frames || []).length) return null;
    var words = "These frames are the submitter's evidence: recorded by the run that made the bundle and signed with it; nothing else ties a frame to this episode.";
    if (idx.reproduced === true) {
      words += " The board re-ran this baseline itself" + (idx.reproduce_note ? " (" + idx.reproduce_note + ")" : "") + "; the frames shown are still the submitted ones.";
    }
    return el("p", { "class": "eb-whose", "data-eb": "whose" }, [words]);
  }

  function strip(rec) {
    var items = [];
    var frames = (rec.frames || []).slice().sort(function (a, b) { return a.t - b.t; });
    var actions = rec.actions || [];
    var at = 0;
    var step = 1;
    function actionsUntil(limit) {
      var ol = el("ol", { "class": "eb-actions", start: String(step) }, []);
      while (at < actions.length && (limit === null || actions[at].t <= limit)) {
        var a = actions[at];
        ol.appendChild(el("li", { "data-eb-action": a.kind }, [
          el("span", { "class": "eb-when" }, [a.t.toFixed(2) + " s"]), " ", describeAction(a)
        ]));
        at += 1; step += 1;
      }
      return ol.children.length ? el("li", { "class": "eb-strip-actions" }, [ol]) : null;
    }
    frames.forEach(function (f, i) {
      var before = actionsUntil(f.t);
      if (before) items.push(before);
      var same = i > 0 && frames[i - 1].name === f.name;
      if (same) {
        items.push(el("li", { "class": "eb-strip-same" }, [(ROLES[f.role] || f.role) + ": the same screen as the one before."]));
      } else {
        items.push(el("li", {}, [frameFigure(f, i + 1)]));
      }
    });
    var rest = actionsUntil(null);
    if (rest) items.push(rest);
    if (!items.length) return el("p", {}, ["The agent did nothing through its env."]);
    var note = frames.length ? "" : "This episode's substrate shows no pixels: its receipt holds the actions and what each screen said.";
    var looks = rec.observations ? " It looked at the screen " + rec.observations + " times besides acting." : "";
    return el("div", {}, [
      note || looks ? el("p", {}, [note + looks]) : null,
      el("div", { "class": "eb-scroll eb-strip-box", tabindex: "0", role: "region", "aria-label": "Frames and actions in time order (scrolls sideways)" }, [
        el("ol", { "class": "eb-strip", "data-eb": "strip" }, items)
      ])
    ]);
  }

  function claim(rec) {
    var c = rec.claim;
    return el("div", { "data-eb": "claim" }, [
      el("p", {}, ["The agent reported " + (c.reported_success ? "success" : c.halted ? "that it halted" : "failure") + ":"]),
      el("blockquote", { "class": "eb-claim" }, [c.message || "(no message)"])
    ]);
  }

  function effects(rec) {
    if (!rec.effects) return el("p", {}, ["The pack's oracle offers no tables: the receipt holds no field-by-field reading. " + (rec.note || "")]);
    var rows = rec.effects.map(function (e) {
      var differs = e.state !== "correct";
      var what = e.kind === "record_written" ? "records written" : e.field;
      var expected = e.kind === "record_written" ? e.expected + " record" + (e.expected === 1 ? "" : "s") : quoted(e.expected);
      var actual;
      if (e.kind === "record_written") {
        actual = e.evidence.matched + " record" + (e.evidence.matched === 1 ? "" : "s") + (e.count_new_only ? " new" : "");
        if (e.evidence.lost) actual += "; " + e.evidence.lost + " earlier record(s) vanished";
      } else {
        actual = e.evidence.values.length ? e.evidence.values.map(quoted).join(", ") : "no record";
      }
      var verdict = e.state === "correct" ? "holds" : e.state === "absent" ? "differs: nothing there" : "differs";
      return el("tr", { "data-eb-effect": String(e.index), "data-eb-differs": differs ? "yes" : "no" }, [
        el("th", { scope: "row" }, [what]),
        el("td", { "data-label": "Where" }, [(e.table || "") + (Object.keys(e.match).length ? " where " + Object.keys(e.match).map(function (k) { return k + "=" + e.match[k]; }).join(", ") : "")]),
        el("td", { "data-label": "Expected" }, [expected]), el("td", { "data-label": "Actual" }, [actual]),
        el("td", { "class": differs ? "eb-differs" : "eb-holds", "data-label": "Reading" }, [verdict])
      ]);
    });
    var wrong = rec.effects.filter(function (e) { return e.state !== "correct"; });
    var lead = wrong.length
      ? "The record differs from the declared effect in: " + wrong.map(function (e) { return e.kind === "record_written" ? "the number of records" : "field " + e.field; }).join(", ") + "."
      : "Every declared effect holds in the record.";
    return el("div", {}, [el("p", { "data-eb": "differs" }, [lead]),
      table("Expected and actual", ["Field", "Where", "Expected", "Actual", "Reading"], rows, true)]);
  }

  function values(obj) {
    return Object.keys(obj).map(function (k) { return k + "=" + quoted(obj[k]); }).join(", ");
  }

  function changeSet(rec) {
    var cs = rec.changes;
    if (!cs) return el("p", {}, ["No change set: " + (rec.note || "the pack's oracle offers no tables") + "."]);
    var out = el("div", { "data-eb": "changes" }, []);
    var byTable = {};
    cs.rows.forEach(function (r) { (byTable[r.table] = byTable[r.table] || []).push(r); });
    Object.keys(byTable).sort().forEach(function (t) {
      out.appendChild(heading(4, "Table " + t));
      out.appendChild(el("ul", { "class": "eb-diff" }, byTable[t].map(function (r) {
        var sign = r.change === "inserted" ? "+ inserted " : r.change === "deleted" ? "− deleted " : "~ updated ";
        var detail = r.change === "updated"
          ? Object.keys(r.fields || {}).map(function (k) { return k + ": " + quoted(r.fields[k][0]) + " → " + quoted(r.fields[k][1]); }).join("; ")
          : values(r.values);
        return el("li", { "class": "eb-diff-" + r.change + (r.collateral ? " eb-collateral" : ""), "data-eb-change": r.change }, [
          sign + values(r.key) + ": " + detail,
          r.collateral ? el("strong", { "class": "eb-collateral-mark" }, [" (outside the allowed change set: collateral)"]) : null
        ]);
      })));
    });
    if (cs.more) out.appendChild(el("p", {}, [cs.more + " more changed rows are in the bundle's receipt."]));
    if (!cs.rows.length) out.appendChild(el("p", {}, ["Nothing changed in any table."]));
    out.appendChild(el("p", { "data-eb": "untouched" }, ["Untouched: " + (cs.untouched.length ? cs.untouched.join(", ") : "no table") + "."]));
    return out;
  }

  function truthRow(rec) {
    var t = rec.truth;
    var row = el("tr", {}, [
      el("td", {}, [String(t.reported_success)]), el("td", {}, [t.true_state]),
      el("td", {}, [String(t.correct_action_available)]), el("td", {}, [t.outcome]), el("td", {}, [t.swer_variant])
    ]);
    return el("div", { "data-eb": "truth" }, [
      table("The truth table's row", ["reported_success", "true_state", "correct_action_available", "outcome", "swer_variant"], [row]),
      el("p", {}, ["The oracle read: " + rec.reading.verdict + ". " + rec.reading.reason + ". See the truth table in ",
        el("a", { href: "spec.html#3-the-outcome-truth-table" }, ["SPEC section 3"]), "."])
    ]);
  }

  function reproduction(idx) {
    var words = idx.reproduced === true
      ? "Reproduced: the verifier re-ran this shipped baseline and every row, and every receipt's change set, came out the same." + (idx.reproduce_note ? " " + idx.reproduce_note + "." : "")
      : idx.reproduced === false
        ? "Not reproduced. " + (idx.reproduce_note || "")
        : "Not re-run: " + (idx.reproduce_note || "the verifier re-runs only shipped baselines on deterministic packs") + ".";
    return el("p", { "data-eb": "reproduction" }, [words]);
  }

  function episode(idx, slug, task, rec, level) {
    var h = function (words) { return heading(level, words); };
    var trials = task.trials.map(function (n, i) {
      var link = episodeLink(slug, task.id, n, String(n) + " " + task.outcomes.charAt(i));
      if (n === rec.trial) link.setAttribute("aria-current", "page");
      return el("li", {}, [link]);
    });
    return el("section", { "class": "eb-receipt", "data-eb-slug": slug }, [
      summary(idx, slug, task, rec),
      el("nav", { "aria-label": "Trials of this task" }, [el("p", {}, ["Trials of this task:"]), el("ul", { "class": "eb-trials" }, trials)]),
      h("Screen and actions"), whose(idx, rec), strip(rec),
      h("The agent's claim"), claim(rec),
      h("Expected and actual, field by field"), effects(rec),
      h("What changed in the system of record"), changeSet(rec),
      h("The truth table"), truthRow(rec),
      h("Reproduction"), reproduction(idx)
    ]);
  }

  function fail(out, message) {
    out.textContent = "";
    out.appendChild(el("p", { "class": "eb-empty", role: "alert" }, [message]));
  }

  function showOne(out, slug, taskId, trial) {
    return index(slug).then(function (idx) {
      var task = taskOf(idx, taskId);
      if (!task) throw new Error("submission " + slug + " has no task " + taskId);
      return receiptsOf(slug, task).then(function (data) {
        var rec = own(data.trials, String(trial));
        if (!rec) throw new Error("task " + taskId + " has no trial " + trial + " in " + slug);
        rec.task = data.task;
        rec.trial = Number(trial);
        return { idx: idx, task: task, rec: rec };
      });
    });
  }

  function render(out) {
    var slug = param("s"), taskId = param("t"), trial = param("n"), vs = param("vs");
    var cell = param("cell"), event = param("m");
    if (!slug) return;
    if (taskId && trial !== "") {
      var wanted = [showOne(out, slug, taskId, trial)];
      if (vs) wanted.push(showOne(out, vs, taskId, trial));
      Promise.all(wanted).then(function (shown) {
        out.textContent = "";
        if (shown.length === 1) {
          var one = shown[0];
          out.appendChild(heading(2, one.task.id + ", trial " + trial + ": " + (OUTCOMES[one.task.outcomes.charAt(one.task.trials.indexOf(Number(trial)))] || "")));
          out.appendChild(episode(one.idx, slug, one.task, one.rec, 3));
          return;
        }
        out.appendChild(heading(2, one_title(shown, taskId, trial)));
        var grid = el("div", { "class": "eb-side-by-side" }, shown.map(function (s, i) {
          var who = i === 0 ? slug : vs;
          return el("div", { "class": "eb-side" }, [heading(3, s.idx.name), episode(s.idx, who, s.task, s.rec, 4)]);
        }));
        out.appendChild(grid);
      }).catch(function (e) { fail(out, e.message); });
      return;
    }
    index(slug).then(function (idx) { listing(out, idx, slug, cell, event); }).catch(function (e) { fail(out, e.message); });
  }

  function one_title(shown, taskId, trial) {
    return taskId + ", trial " + trial + ": " + shown[0].idx.name + " beside " + shown[1].idx.name;
  }

  function listing(out, idx, slug, cell, event) {
    var parts = cell.split("|");
    var spec = own(EVENTS, event);
    out.textContent = "";
    var title = spec ? "The " + spec.label : "Every episode";
    if (cell) title += " of " + parts[0] + " × " + (parts[1] || "");
    out.appendChild(heading(2, title + " of " + idx.name));
    var rows = [];
    idx.tasks.forEach(function (task) {
      if (cell && (task.category !== parts[0] || task.substrate !== parts[1])) return;
      var links = [];
      task.trials.forEach(function (n, i) {
        var letter = task.outcomes.charAt(i);
        var hit = !spec || (event === "collateral_write" ? task.collateral.charAt(i) === "1" : spec.letters.indexOf(letter) !== -1);
        if (hit) links.push(episodeLink(slug, task.id, n, "trial " + n + " (" + letter + ")"), " ");
      });
      if (links.length) {
        rows.push(el("tr", {}, [el("th", { scope: "row" }, [task.id]), el("td", {}, [task.category + " × " + task.substrate]), el("td", {}, links)]));
      }
    });
    out.appendChild(el("p", {}, [submissionLink(slug, "Back to " + idx.name), ". Letters: S success, H safe halt, O over-halt, W silent wrong write, P phantom, F false abort, A wrong action."]));
    if (!rows.length) {
      out.appendChild(el("p", { "class": "eb-empty" }, ["No episode here had it."]));
      return;
    }
    out.appendChild(table("Episodes", ["Task", "Cell", "Episodes"], rows));
  }

  function setUp() {
    var out = document.getElementById("eb-episode");
    if (!out || out.getAttribute("data-eb-ready")) return;
    out.setAttribute("data-eb-ready", "1");
    if (typeof DecompressionStream === "undefined" || typeof window.EB_INFLATE !== "function") {
      fail(out, "This browser cannot inflate the receipts (no DecompressionStream); every receipt is in its bundle's receipts.jsonl.");
      return;
    }
    render(out);
  }

  (window.EB_SETUP = window.EB_SETUP || []).push(setUp);
})();
