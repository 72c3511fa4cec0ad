"""Benchmark the site build and its size budgets: 1,000 synthetic clinic submissions of 270
episodes each (27 tasks x 10 trials on the web substrate, every row with its receipt), then
one more.

The material is real: three shipped baselines run on the clinic's web substrate in headless
Chromium at 10 trials (810 episodes; kept with ``--keep``). Each synthetic submission takes,
per (task, trial), the row and the receipt of a randomly chosen baseline (its frames too), so
it verifies like a real bundle. Prints the wall time of a cold build (empty caches, no
previous site) and of a rebuild after one more submission, the peak memory, the build's own
per-stage times, the load average around the runs (the machine is shared), and the size
budgets:

* the site of 1,000 submissions under 1 GiB (GitHub Pages' limit). Synthetic submissions
  share their material's frames, which the site stores once; the budget is also checked
  against the bound where no two submissions share a frame (every submission's shown frames
  counted in full);
* the shipped site (the repository's reference bundles, with receipts on every substrate,
  built cold) under 25 MiB;
* a bundle of the clinic on the web substrate at 10 trials under 20 MiB (the material's).

Synthetic submissions are unsigned, so they are built with ``--allow-unsigned`` (previews).

Beside the cold build, in the same run, it builds a plain mkdocs-material site of as many
pages with the ``mkdocs`` command: the same theme, palette, features and search; one markdown
page per submission holding the tables its page on the site shows (headline rates, per cell,
outcome counts, pass^k, the task x trial outcomes, the manifest), written from the bundle's
own numbers, left out of the navigation as the submission pages are; short pages for the
site's others. It prints the CPU seconds (user + system of the process and its children:
load-independent) of both builds, their ratio, and the size of both sites per 1,000
submissions.

At the end it prints the figures of issue 31 against its targets: the size per 1,000
submissions (25 MiB), the landing page's transferred bytes (gzip of the page and of every
script and stylesheet it loads, with the theme's search worker and index, which every page
fetches; 300 kB), the largest JS or JSON file a page fetches (1 MiB; the downloads are
listed apart), the most one system search fetches (the finder's manifest and its largest
bucket; 300 kB), and the rebuild after one new submission (15 s).

    .venv/bin/python benchmarks/bench_site.py [--submissions 1000] [--shipped-material] [--keep DIR]
    .venv/bin/python benchmarks/bench_site.py --keep DIR --rebuilds 3 [--submissions 1000] ...
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson
from bench_make_site import build

from effectbench.bundle import Submission, slugify, write_bundle
from effectbench.manifest import fingerprint
from effectbench.metrics import episode_frame, summarize
from effectbench.packs import get_pack
from effectbench.site._receipts import frames_to_show

ROOT = Path(__file__).resolve().parents[1]
TRIALS = 10
ARMS = ("screen_only", "effect_verified", "always_halt")
SUBSTRATE = "web"
GIB, MIB = 2**30, 2**20
SITE_BUDGET = 1 * GIB
SHIPPED_BUDGET = 25 * MIB
BUNDLE_BUDGET = 20 * MIB


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def shipped_material() -> dict[str, Path]:
    """The shipped clinic web references (3 trials each), as material that needs no browser."""
    found = {}
    for b in sorted((ROOT / "submissions").iterdir()):
        sub = orjson.loads((b / "submission.json").read_bytes())
        if sub["pack"]["name"] == "clinic" and b.name.endswith(f"-clinic-{SUBSTRATE}"):
            found[sub["system"]["name"]] = b
    if not found:
        sys.exit(f"no shipped clinic/{SUBSTRATE} bundle in {ROOT / 'submissions'}")
    return found


def material(folder: Path) -> dict[str, Path]:
    """Run (or reuse) each arm on the clinic's web substrate: real bundles with receipts."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for arm in ARMS:
        suffix = f"_{slugify(f'material {arm}')}"
        found = [p for p in folder.iterdir() if p.name.endswith(suffix)]
        if found and (found[0] / "receipts.jsonl").is_file():
            out[arm] = found[0]
            continue
        t = time.perf_counter()
        cmd = [sys.executable, "-m", "effectbench.cli", "submit", "--pack", "clinic"]
        cmd += ["--substrate", SUBSTRATE, "--baseline", arm, "--trials", str(TRIALS)]
        cmd += ["--name", f"material {arm}", "--out", str(folder), "--progress", "off"]
        journals = list(folder.glob(f"*{suffix}.journal"))  # a run stopped earlier goes on
        resume = ["--resume", str(journals[0])] if journals else []
        subprocess.run(cmd + resume, check=True)
        (made,) = [p for p in folder.iterdir() if p.name.endswith(suffix)]
        out[arm] = made
        print(
            f"material: {arm} on clinic/{SUBSTRATE}, {TRIALS} trials, "
            f"{time.perf_counter() - t:.0f}s"
        )
    return out


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line]


def load_material(
    bundles: dict[str, Path],
) -> dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]:
    """Each arm's (row, receipt) pairs, in file order."""
    return {
        arm: list(zip(_lines(b / "episodes.jsonl"), _lines(b / "receipts.jsonl"), strict=True))
        for arm, b in bundles.items()
    }


def synthetic_bundle(
    out: Path,
    i: int,
    pairs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]],
    frames_of: dict[str, Path],
) -> Path:
    """Write submission ``i``: per (task, trial) the real row and receipt of a random baseline."""
    rng = random.Random(i)
    arms = sorted(pairs)
    weights = [rng.random() for _ in arms]
    name = f"synthetic-{i:04d}"
    rows, receipts, frames = [], [], set[str]()
    trials = 1 + max(row["trial"] for row, _ in pairs[arms[0]])
    for k in range(len(pairs[arms[0]])):
        arm = rng.choices(arms, weights)[0]
        row, receipt = pairs[arm][k]
        episode_id = f"{name}::{row['task_id']}::t{row['trial']}"
        rows.append({**row, "arm": name, "episode_id": episode_id})
        receipts.append({**receipt, "episode_id": episode_id})
        frames.update(f["name"] for f in receipt["frames"])
    pack = get_pack("clinic")
    sub = Submission.model_validate(
        {
            "effectbench_bundle_version": 2,
            "spec_version": "1.2.0",
            "system": {"name": name, "description": "synthetic mix of baseline episodes"},
            "pack": {"name": "clinic", "fingerprint": fingerprint(pack.manifest())},
            "trials_per_task": trials,
            "seeds": list(range(trials)),
            "environment": {"python": platform.python_version(), "platform": sys.platform},
            "results": summarize(episode_frame(rows)),
        }
    )
    folder = out / f"2026-01-01_{name}"
    shipped = write_bundle(folder, sub.model_copy(update={"effectbench_bundle_version": 1}), rows)
    (shipped / "receipts.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in receipts))
    (shipped / "frames").mkdir()
    for f in frames:
        shutil.copyfile(frames_of[f], shipped / "frames" / f)
    text = (
        (shipped / "submission.json")
        .read_text()
        .replace('"effectbench_bundle_version": 1', '"effectbench_bundle_version": 2', 1)
    )
    (shipped / "submission.json").write_text(text)
    return shipped


def _tree_rss(root: int) -> tuple[int, int]:
    """Return the resident memory (bytes) of process ``root`` and its descendants: summed,
    and the largest one's."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, ppid in parent.items() if ppid in tree} - tree
        tree |= more
        grew = bool(more)
    total = largest = 0
    for pid in tree:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                    total += rss
                    largest = max(largest, rss)
        except OSError:
            continue
    return total, largest


def _child_env() -> dict[str, str]:
    """The environment of a timed build: this one, but Python keeps the bytecode it compiles,
    as on a user's machine (where PYTHONDONTWRITEBYTECODE is set, as on this one, every build
    would compile its imports again: about 3 s of each rebuild, and of the plain build)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_build(subs: Path, out: Path, cache: Path) -> tuple[float, float, float, str, float]:
    """Build in a child process.

    Return (seconds, peak RSS of the largest single process in MiB (the kernel's figure when
    this build set a new peak among this script's children, else sampled every 0.1 s), peak of
    the summed RSS of the build and its pool workers in MiB, sampled every 0.1 s, the build's
    output, CPU seconds of the build and its workers).
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    cmd = [sys.executable, "-m", "effectbench.cli", "site", "build", "--submissions", str(subs)]
    cmd += ["--out", str(out), "--root", str(ROOT), "--cache-dir", str(cache), "--allow-unsigned"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_child_env()
    )
    peak_tree = peak_one = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_tree, peak_one
        while not done.wait(0.1):
            total, largest = _tree_rss(proc.pid)
            peak_tree, peak_one = max(peak_tree, total), max(peak_one, largest)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:
        sys.exit(f"build failed:\n{stdout}\n{stderr}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime - cpu_before
    stdout += f"\ncpu: {cpu:.1f}s user+system (the build and its workers; load-independent)"
    # The children's peak the kernel keeps is over every child this process waited for: it
    # is this build's only when this build raised it; else the sampled peak is this build's.
    peak = usage.ru_maxrss * 1024 if usage.ru_maxrss > before else peak_one
    return seconds, peak / 2**20, peak_tree / 2**20, stdout, cpu


PLAIN_CONFIG = """site_name: plain mkdocs-material
docs_dir: docs
use_directory_urls: false
strict: true
not_in_nav: |
  /pages/
nav:
  - Home: index.md
theme:
  name: material
  font: false
  language: en
  features: [content.tooltips, navigation.tabs, navigation.top, search.highlight]
  palette:
    - media: "(prefers-color-scheme: light)"
      scheme: default
      toggle: {icon: material/weather-night, name: Dark mode}
    - media: "(prefers-color-scheme: dark)"
      scheme: slate
      toggle: {icon: material/weather-sunny, name: Light mode}
plugins: [search]
markdown_extensions: [tables, toc, admonition, attr_list]
"""


PLAIN_RATES = ("swer", "over_halt", "task_success", "screen_success")


def _rate_text(r: dict[str, Any]) -> str:
    ci = r["ci"]
    return (
        f"{100 * r['rate']:.1f}% [{100 * ci['lo']:.1f}%, {100 * ci['hi']:.1f}%] "
        f"{r['numerator']}/{r['denominator']}"
    )


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def plain_page(bundle: Path) -> str:
    """Return a submission's page as plain mkdocs markdown: its title and the tables its page
    on the site shows (headline, per cell, outcome counts, pass^k, task x trial outcomes,
    manifest), from the bundle's own numbers and rows."""
    sub = json.loads((bundle / "submission.json").read_text(encoding="utf-8"))
    res = sub["results"]
    rows = [json.loads(x) for x in (bundle / "episodes.jsonl").read_text().splitlines()]
    trials = sorted({r["trial"] for r in rows})
    matrix: dict[str, list[str]] = {}
    for r in rows:
        matrix.setdefault(r["task_id"], ["."] * len(trials))[trials.index(r["trial"])] = r[
            "outcome"
        ][0].upper()
    parts = [
        f"# {sub['system']['name']}\n",
        f"{sub['system']['description']}. Pack `{sub['pack']['name']}`, "
        f"{sub['trials_per_task']} trials per task, {res['n_episodes']} episodes.\n",
        "## Headline numbers\n",
        _table(
            [*PLAIN_RATES, "gap"],
            [
                [
                    *(_rate_text(res[k]) for k in PLAIN_RATES),
                    f"{100 * res['success_effect_gap']:+.1f} pts",
                ]
            ],
        ),
        "## Per cell\n",
        _table(
            ["category", "substrate", "n", *PLAIN_RATES],
            [
                [
                    c["category"],
                    c["substrate"],
                    str(c["n"]),
                    *(_rate_text(c[k]) for k in PLAIN_RATES),
                ]
                for c in res["cells"]
            ],
        ),
        "## Outcome counts\n",
        _table(["outcome", "episodes"], [[k, str(v)] for k, v in res["outcome_counts"].items()]),
        "## pass^k\n",
        _table(
            [f"k = {k}" for k in res["pass_hat_k"]],
            [[f"{v:.3f}" for v in res["pass_hat_k"].values()]],
        ),
        "## Task x trial outcomes\n",
        _table(["task", *map(str, trials)], [[t, *o] for t, o in sorted(matrix.items())]),
        "## Reproducibility manifest\n",
        _table(
            ["field", "value"],
            [[k, f"`{v}`"] for k, v in sorted({**sub["environment"], **sub["pack"]}.items())],
        ),
    ]
    return "\n".join(parts)


def plain_site(work: Path, bundles: list[Path], extra_pages: int) -> Path:
    """Write a plain mkdocs-material project: one markdown page per submission holding the
    same tables as its page on the site, and ``extra_pages`` short pages (the site's others);
    return its config."""
    root = work / "plain"
    shutil.rmtree(root, ignore_errors=True)
    (root / "docs" / "pages").mkdir(parents=True)
    (root / "mkdocs.yml").write_text(PLAIN_CONFIG, encoding="utf-8")
    links = []
    for i, bundle in enumerate(bundles):
        (root / "docs" / "pages" / f"page-{i:04d}.md").write_text(
            plain_page(bundle), encoding="utf-8"
        )
        links.append(f"- [{bundle.name}](pages/page-{i:04d}.md)")
    for i in range(extra_pages):
        (root / "docs" / "pages" / f"extra-{i}.md").write_text(
            f"# Page {i}\n\nA hand-written page of the site.\n", encoding="utf-8"
        )
        links.append(f"- [Page {i}](pages/extra-{i}.md)")
    (root / "docs" / "index.md").write_text("# Pages\n\n" + "\n".join(links) + "\n")
    return root / "mkdocs.yml"


def run_plain(config: Path) -> tuple[float, float, Path]:
    """Build the plain site with the ``mkdocs`` command; return (wall s, CPU s, site folder)."""
    site = config.parent / "site"
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_before = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(site)]
    env = {**_child_env(), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"plain mkdocs build failed:\n{done.stdout}\n{done.stderr}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, usage.ru_utime + usage.ru_stime - cpu_before, site


def site_parts(out: Path) -> dict[str, int]:
    """Bytes of the built site by part: submission pages, their files, receipts, boards ..."""
    parts: dict[str, int] = {}
    for f in out.rglob("*"):
        if not f.is_file():
            continue
        rel = f.relative_to(out)
        top = rel.parts[0]
        if top == "submissions":
            part = (
                "submission pages (HTML)" if f.suffix == ".html" else f"bundle files (*{f.suffix})"
            )
        elif top == "receipts":
            part = {
                "frames": "receipts/frames (shown key frames)",
                "c": "receipts/c (receipt shards, by content)",
            }.get(rel.parts[1], "receipts/<slug>/index.js")
        elif top in ("downloads", "search", "badges", "compare", "assets"):
            part = f"{top}/"
        elif f.suffix == ".html":
            part = f"{rel} (page)"
        else:
            part = "other"
        parts[part] = parts.get(part, 0) + f.stat().st_size
    return parts


def unshared_frames(subs: Path) -> int:
    """Bytes of the frames the site shows if no two submissions shared one (each counted in
    full for every submission that shows it: what distinct real submissions would cost)."""
    total = 0
    for bundle in subs.iterdir():
        by_task: dict[str, list[dict[str, Any]]] = {}
        for receipt in _lines(bundle / "receipts.jsonl"):
            by_task.setdefault(receipt["task_id"], []).append(receipt)
        shown = frames_to_show(by_task, bundle / "frames")
        total += sum((bundle / "frames" / n).stat().st_size for n in shown)
    return total


def shipped_site(work: Path) -> tuple[int, float, str]:
    """Build the shipped site from the repository's own ``submissions/`` (the reference
    bundles with receipts on every substrate), cold: no cache, every bundle verified and
    sampled for reproduction (:func:`bench_make_site.build`). Return its bytes, the seconds
    and the build's summary."""
    out, cache = work / "shipped-public", work / "shipped-cache"
    for p in (out, cache):
        shutil.rmtree(p, ignore_errors=True)
    seconds, _cpu, summary = build(out, cache)
    return _size(out), seconds, summary


ASSET = re.compile(r'(?:src|href)="([^"#?]+\.(?:js|css))(?:[?#][^"]*)?"')
LANDING_BUDGET = 300 * 1000
SHARD_BUDGET = MIB
REBUILD_BUDGET = 15.0
PER_1000_BUDGET = 25 * MIB


def _gz(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=6, mtime=0))


def landing_transfer(out: Path) -> tuple[int, int, list[str]]:
    """Return (raw bytes, gzip-compressed bytes, files) of the landing page and of every
    local script and stylesheet it loads, with the theme's search worker and index, which
    every page fetches as it loads (what a first visit transfers, compressed as a static host
    serves it; images and later fetches apart)."""
    page = out / "index.html"
    html = page.read_bytes()
    files = ["index.html"]
    raw, packed = len(html), _gz(html)
    workers = out / "assets" / "javascripts" / "workers"
    search = [str(f.relative_to(out)) for f in workers.glob("search.*.min.js")]
    search.append("search/search_index.json")
    for ref in dict.fromkeys([*ASSET.findall(html.decode("utf-8")), *search]):
        if "://" in ref or ref.startswith("//"):
            continue
        f = (out / ref).resolve()
        if f.is_file() and f.is_relative_to(out.resolve()):
            data = f.read_bytes()
            raw, packed = raw + len(data), packed + _gz(data)
            files.append(ref)
    return raw, packed, files


def largest(out: Path, downloads: bool) -> tuple[int, str]:
    """Return the largest JS or JSON file (bytes, site path): those pages fetch, or the
    downloads (``downloads/``, ``submissions/*/``)."""
    best = (0, "")
    for f in out.rglob("*"):
        if not f.is_file() or not f.name.endswith((".js", ".json", ".json.gz", ".jsonl.gz")):
            continue
        rel = f.relative_to(out)
        is_download = rel.parts[0] == "downloads" or (
            rel.parts[0] == "submissions" and len(rel.parts) > 2
        )
        if is_download == downloads:
            best = max(best, (f.stat().st_size, str(rel)))
    return best


def finder_query(out: Path) -> tuple[int, int, str]:
    """Return (raw bytes, gzip bytes, bucket) of the most a system search fetches: the
    finder's manifest and the parts of its largest bucket (``effectbench.site._find``)."""
    manifest = out / "search" / "systems-0.js"
    if not manifest.is_file():
        return 0, 0, "none"
    parts: dict[str, list[Path]] = {}
    for f in (out / "search" / "systems").glob("*.js"):
        parts.setdefault(f.stem.rsplit("-", 1)[0], []).append(f)
    head = manifest.read_bytes()
    best = (len(head), _gz(head), "none")
    for key, files in parts.items():
        data = [f.read_bytes() for f in files]
        raw = len(head) + sum(len(d) for d in data)
        packed = _gz(head) + sum(_gz(d) for d in data)
        label = f"'{bytes.fromhex(key).decode()}', {len(files)} part(s)"
        best = max(best, (raw, packed, label))
    return best


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip()


def _budget(label: str, value: int, budget: int) -> str:
    ok = "within" if value <= budget else "OVER"
    return f"  {label}: {value / MIB:.1f} MiB ({ok} the {budget / MIB:.0f} MiB budget)"


def report_targets(out: Path, n: int, size: int, rebuild_s: float) -> None:
    """Print the figures of issue 31 against its targets."""
    per = size * 1000 / n
    raw, packed, files = landing_transfer(out)
    shard, shard_path = largest(out, downloads=False)
    download, download_path = largest(out, downloads=True)
    search_raw, search_gz, bucket = finder_query(out)

    def ok(value: float, budget: float) -> str:
        return "within" if value <= budget else "OVER"

    print(f"\nissue 31 targets at {n} submissions (load average {_load()}):")
    print(f"  size per 1,000 submissions: {per / MIB:.1f} MiB ({ok(per, PER_1000_BUDGET)} 25 MiB)")
    print(
        f"  landing page transferred: {packed / 1000:.0f} kB gzip ({raw / 1000:.0f} kB raw, "
        f"{len(files)} files) ({ok(packed, LANDING_BUDGET)} 300 kB)"
    )
    print(
        f"  largest JS/JSON a page fetches: {shard / MIB:.2f} MiB {shard_path} "
        f"({ok(shard, SHARD_BUDGET)} 1 MiB)"
    )
    print(f"  largest download (not fetched by pages): {download / MIB:.2f} MiB {download_path}")
    print(
        f"  one system search fetches at most: {search_raw / 1000:.0f} kB "
        f"({search_gz / 1000:.0f} kB gzip: the finder's manifest and its largest bucket, "
        f"{bucket}) ({ok(search_gz, LANDING_BUDGET)} 300 kB per query; the theme's index "
        "of the site's own pages is part of every page's load above)"
    )
    print(
        f"  rebuild after one new submission: {rebuild_s:.1f}s wall "
        f"({ok(rebuild_s, REBUILD_BUDGET)} 15 s)"
    )


def main() -> int:
    """Make the material, generate, build cold, add one, rebuild; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", "--submissions", dest="n", type=int, default=1000)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument(
        "--shipped-only", action="store_true", help="only the shipped site and the bundles' sizes"
    )
    parser.add_argument(
        "--shipped-material",
        action="store_true",
        help=f"mix the shipped clinic/{SUBSTRATE} references (3 trials) instead of running "
        f"{len(ARMS)} arms at {TRIALS} trials in Chromium first (the smallest run)",
    )
    parser.add_argument(
        "--no-shipped", action="store_true", help="skip building the shipped site at the end"
    )
    parser.add_argument(
        "--rebuilds",
        type=int,
        metavar="K",
        help="with --keep, on the site and cache an earlier run left there: build once to take "
        "the current code, then K times add one submission and rebuild (no cold or plain "
        "build); the added bundles are removed at the end",
    )
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-site-"))
    subs, out, cache = work / "submissions", work / "public", work / "cache"
    if args.rebuilds is not None:
        return rebuilds_only(args, subs, out, cache)
    for p in (out, cache):
        shutil.rmtree(p, ignore_errors=True)
    print(f"load average at start: {_load()}")
    if args.shipped_only:
        shipped, shipped_s, shipped_out = shipped_site(work)
        print("shipped site:\n  " + "\n  ".join(shipped_out.strip().splitlines()))
        print(f"size budgets (load average now {_load()}):")
        print(_budget(f"shipped site (cold, {shipped_s:.0f}s)", shipped, SHIPPED_BUDGET))
        for b in sorted(p for p in (ROOT / "submissions").iterdir() if p.is_dir()):
            print(_budget(f"bundle {b.name}", _size(b), BUNDLE_BUDGET))
        return 0
    bundles = shipped_material() if args.shipped_material else material(work / "material")
    pairs = load_material(bundles)
    episodes = len(next(iter(pairs.values())))
    trials = 1 + max(row["trial"] for row, _ in next(iter(pairs.values())))
    frames_of = {p.name: p for b in bundles.values() for p in (b / "frames").iterdir()}
    extra = subs / f"2026-01-01_synthetic-{args.n:04d}"
    if args.keep and extra.is_dir():
        shutil.rmtree(extra)  # the one a previous run added for its rebuild
    if args.keep and subs.is_dir() and len(list(subs.iterdir())) == args.n:
        print(f"reusing the {args.n} synthetic bundles in {subs}")
    else:
        shutil.rmtree(subs, ignore_errors=True)
        subs.mkdir(parents=True)
        t = time.perf_counter()
        for i in range(args.n):
            synthetic_bundle(subs, i, pairs, frames_of)
        print(
            f"generated {args.n} synthetic bundles ({trials} trials, {episodes} episodes and "
            f"receipts each) in {time.perf_counter() - t:.1f}s"
        )

    print(f"load average before the cold build: {_load()}")
    seconds, peak, tree, output, cpu = run_build(subs, out, cache)
    print(
        f"\ncold build of {args.n} submissions: {seconds:.1f}s wall, peak RSS {peak:.0f} MiB "
        f"(largest process), {tree:.0f} MiB (build + workers, summed)"
    )
    print("  " + "\n  ".join(output.strip().splitlines()))
    cold_size = _size(out)
    n_pages = sum(1 for _ in out.rglob("*.html"))
    folders = sorted(p for p in subs.iterdir() if p.is_dir())
    print(f"\nload average before the plain build: {_load()}")
    plain = plain_site(work, folders, n_pages - len(folders) - 1)
    plain_wall, plain_cpu, plain_out = run_plain(plain)
    plain_size = _size(plain_out)
    print(
        f"plain mkdocs-material build of {n_pages} pages (each submission's tables as "
        f"markdown): {plain_wall:.1f}s wall, {plain_cpu:.1f}s CPU, {plain_size / MIB:.1f} MiB"
    )
    print(
        f"CPU: cold site build {cpu:.1f}s / plain build {plain_cpu:.1f}s = "
        f"{cpu / plain_cpu:.2f}x (target < 2.5x)"
    )
    print(
        f"size: site {cold_size / MIB:.1f} MiB = "
        f"{cold_size / MIB * 1000 / args.n:.1f} MiB per 1,000 submissions (target < 40 without "
        f"receipts' frames); plain {plain_size / MIB * 1000 / args.n:.1f} MiB per 1,000 pages"
    )
    print(f"load average after the plain build: {_load()}")
    synthetic_bundle(subs, args.n, pairs, frames_of)
    seconds2, peak2, tree2, output2, _ = run_build(subs, out, cache)
    print(
        f"\nrebuild after adding one: {seconds2:.1f}s wall, peak RSS {peak2:.0f} MiB "
        f"(largest process), {tree2:.0f} MiB (build + workers, summed)"
    )
    print("  " + "\n  ".join(output2.strip().splitlines()))
    size, parts = print_parts(out, args.n + 1)
    shared = parts.get("receipts/frames (shown key frames)", 0)
    bound = size - shared + unshared_frames(subs)
    shipped, shipped_s, shipped_out = (-1, 0.0, "") if args.no_shipped else shipped_site(work)
    if shipped >= 0:
        print("\nshipped site:\n  " + "\n  ".join(shipped_out.strip().splitlines()))
    material_sizes = {arm: _size(b) for arm, b in bundles.items()}
    print(f"\nsize budgets (load average now {_load()}):")
    print(_budget(f"site of {args.n + 1} submissions of {episodes} episodes", size, SITE_BUDGET))
    print(_budget("the same, no frame shared between submissions (bound)", bound, SITE_BUDGET))
    if shipped >= 0:
        print(_budget(f"shipped site (cold, {shipped_s:.0f}s)", shipped, SHIPPED_BUDGET))
    for arm, nbytes in material_sizes.items():
        print(_budget(f"bundle: clinic/{SUBSTRATE}, {trials} trials, {arm}", nbytes, BUNDLE_BUDGET))
    print(f"load average after: {_load()}")
    report_targets(out, args.n + 1, size, seconds2)
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def print_parts(out: Path, n: int) -> tuple[int, dict[str, int]]:
    """Print the site's size, per 1,000 of its ``n`` submissions and by part; return both."""
    size = _size(out)
    parts = site_parts(out)
    print(f"\nsite: {sum(1 for _ in out.rglob('*.html'))} HTML pages, {size / MIB:.1f} MiB")
    print(f"  {size / MIB * 1000 / n:.1f} MiB per 1,000 submissions; by part:")
    for part, nbytes in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {nbytes / MIB:8.1f} MiB  {100 * nbytes / size:5.1f}%  {part}")
    return size, parts


def rebuilds_only(args: argparse.Namespace, subs: Path, out: Path, cache: Path) -> int:
    """Time ``args.rebuilds`` rebuilds after one new submission each, on a kept site."""
    if args.keep is None or not (out / "index.html").is_file() or not cache.is_dir():
        print("--rebuilds needs --keep FOLDER holding a site and cache from an earlier run")
        return 2
    bundles = shipped_material() if args.shipped_material else material(args.keep / "material")
    pairs = load_material(bundles)
    frames_of = {p.name: p for b in bundles.values() for p in (b / "frames").iterdir()}
    added = range(args.n, args.n + max(args.rebuilds, 1))  # the first: an earlier run's
    extras = [subs / f"2026-01-01_synthetic-{i:04d}" for i in added]
    for extra in extras:
        shutil.rmtree(extra, ignore_errors=True)
    try:
        print(f"load average before the build that takes the current code: {_load()}")
        seconds, _, _, _, cpu = run_build(subs, out, cache)
        print(f"  {seconds:.1f}s wall, {cpu:.1f}s CPU")
        walls, cpus = [], []
        for i in range(args.n, args.n + args.rebuilds):
            synthetic_bundle(subs, i, pairs, frames_of)
            print(f"load average before rebuild {i - args.n + 1}: {_load()}")
            seconds, peak, tree, output, cpu = run_build(subs, out, cache)
            walls.append(seconds)
            cpus.append(cpu)
            print(
                f"rebuild after adding one: {seconds:.1f}s wall, {cpu:.1f}s CPU, peak RSS "
                f"{peak:.0f} MiB (largest process), {tree:.0f} MiB (build + workers, summed)"
            )
            print("  " + "\n  ".join(output.strip().splitlines()))
        print(
            f"rebuilds at {args.n} submissions and more: median {statistics.median(walls):.1f}s "
            f"wall, {statistics.median(cpus):.1f}s CPU of {len(walls)} "
            f"(load average now {_load()})"
        )
        if walls:  # the site as the last rebuild left it
            n = args.n + args.rebuilds
            size, _ = print_parts(out, n)
            report_targets(out, n, size, statistics.median(walls))
    finally:
        for extra in extras:
            shutil.rmtree(extra, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
