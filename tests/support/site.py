"""Real site inputs: the reference bundles plus a hostile-named, a tampered and a preview bundle."""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from effectbench.baselines import get_baseline
from effectbench.bundle import SystemInfo
from effectbench.cli import main
from effectbench.manifest import manifest_of
from effectbench.packs.mockmed import MockMedProvider
from effectbench.packs.references import REFERENCE_SET
from effectbench.produce import ReferenceSpec, make_submission, write_submission
from effectbench.run.runner import evaluate
from effectbench.schema import AgentReport, Split, Substrate
from effectbench.seam import AgentTask, Attempt, EnvHandle, SystemUnderTest
from verifier.records import RecordPolicy

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "submissions"
RECORDS = RecordPolicy(records=ROOT / "reproductions")
"""The maintainers' reproduction records of the listed references, as ``make site`` reads
them: a site fixture built with it judges every copied reference by its record instead of
re-running it (the re-run path is tested once per pack and substrate, in
tests/test_shipped_site.py and the packs' own tests); a bundle a test makes has no record
and is re-run as before."""


def board_key_of(bundle: Path) -> str:
    """The anchor the site gives a bundle's pack (its boards, one per substrate, share one
    table): ``spec<major>-<pack>``."""
    sub = json.loads((bundle / "submission.json").read_text(encoding="utf-8"))
    return f"spec{sub['spec_version'].split('.')[0]}-{sub['pack']['name']}".lower()


def substrates_of(bundle: Path) -> list[str]:
    """The substrates a bundle's rows ran, in SPEC order."""
    rows = (bundle / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    seen = {json.loads(line)["substrate"] for line in rows if line.strip()}
    return [s.value for s in Substrate if s.value in seen]


def boards_of_bundle(bundle: Path) -> list[str]:
    """The keys of the boards a bundle is on: its pack's anchor and each substrate it ran."""
    return [f"{board_key_of(bundle)}-{s}" for s in substrates_of(bundle)]


def _spec_of(bundle: Path) -> ReferenceSpec | None:
    slug = bundle.name.split("_", 1)[-1]
    return next((s for s in REFERENCE_SET if s.folder_slug == slug), None)


SCREEN_REFERENCES = [
    b for b in sorted(REFERENCE.iterdir()) if (spec := _spec_of(b)) and spec.substrate is not None
]
"""The reference bundles run through a screen (web, desktop, remote display): verifying one
re-runs a sample of its rows in Chromium or under X, so only the shipped site's test does."""
API_REFERENCES = [
    b
    for b in sorted(REFERENCE.iterdir())
    if (b / "submission.json").is_file()
    and b not in SCREEN_REFERENCES
    and (spec := _spec_of(b)) is not None
    and spec.pack in ("mockmed", "clinic")
]
"""The core packs' other reference bundles (MockMed's and the clinic's API runs): the site
fixtures' base (the ticketing pack's re-run on a PostgreSQL server: the shipped site's test)."""


def copy_references(dest: Path) -> Path:
    """Copy :data:`API_REFERENCES` into ``dest`` (created); return it."""
    dest.mkdir(parents=True, exist_ok=True)
    for bundle in API_REFERENCES:
        shutil.copytree(bundle, dest / bundle.name)
    return dest


REFERENCE_BOARDS: dict[str, list[str]] = {}
"""Pack anchor -> folder names of the copied reference bundles (:func:`copy_references`)."""
REFERENCE_BOARD_KEYS: dict[str, list[str]] = {}
"""Board key (pack anchor and substrate) -> folder names of the copied reference bundles."""
for _bundle in API_REFERENCES:
    REFERENCE_BOARDS.setdefault(board_key_of(_bundle), []).append(_bundle.name)
    for _key in boards_of_bundle(_bundle):
        REFERENCE_BOARD_KEYS.setdefault(_key, []).append(_bundle.name)
N_REFERENCE = sum(len(names) for names in REFERENCE_BOARDS.values())
MOCKMED_BOARD = "spec1-mockmed-anchor"
"""The MockMed table: the four MockMed reference bundles and the <script>-named one."""
MOCKMED_WEB = "spec1-mockmed-anchor-web"
"""Its one board (MockMed runs on the web)."""
CLINIC_BOARD = "spec1-clinic"
CLINIC_API = "spec1-clinic-api"
"""The clinic's board of its API runs (the reference bundles the site fixtures copy)."""
SCRIPT_NAME = "<script>window.__pwned=1</script> Evil bot"
EVIL_DESCRIPTION = '<img src=x onerror="window.__pwned=3"> described'
EVIL_URL = "javascript:window.__pwned=2"


def submit(out: Path, baseline: str, name: str, readme: Path | None = None, *extra: str) -> Path:
    """Write a bundle with the real ``effectbench submit`` command; return its folder."""
    before = set(out.iterdir()) if out.exists() else set()
    args = ["submit", "--baseline", baseline, "--trials", "10", "--name", name, "--out", str(out)]
    if readme is not None:
        args += ["--readme", str(readme)]
    args += extra
    assert main(args) == 0
    (new,) = set(out.iterdir()) - before
    return new


def make_submissions(base: Path) -> dict[str, Path]:
    """The reference bundles, a bundle named with a <script>, and a tampered (refused) one."""
    subs = copy_references(base / "submissions")
    readme = base / "README.md"
    readme.write_text("# Notes\n<img src=x onerror=alert(1)> <b>bold?</b>\n", encoding="utf-8")
    evil = submit(
        subs,
        "screen_only",
        SCRIPT_NAME,
        readme,
        "--description",
        EVIL_DESCRIPTION,
        "--url",
        EVIL_URL,
        "--trials",
        "3",  # its own run: 10 trials would be a row-identical copy of the reference bundle
    )
    bad = subs / "2026-01-01_tampered"
    shutil.copytree(next(REFERENCE.glob("*screen-only")), bad)
    lines = (bad / "episodes.jsonl").read_text().splitlines()
    row = json.loads(lines[0])
    row["outcome"] = "success" if row["outcome"] != "success" else "safe_halt"
    lines[0] = json.dumps(row)
    (bad / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    return {"subs": subs, "evil": evil, "bad": bad}


def slug_of(site: dict[str, Any], suffix: str) -> str:
    subs: Path = site["subs"]
    (path,) = [p for p in subs.iterdir() if p.name.endswith(suffix)]
    return path.name.lower()


def site_root(base: Path, withdrawn: list[dict[str, str]], site_url: str = "") -> Path:
    """A copy of the repository's site sources whose withdrawn.yml lists ``withdrawn`` (and
    whose mkdocs.yml sets ``site_url`` when given)."""
    root = base / "root"
    shutil.copytree(ROOT / "site", root / "site")
    shutil.copy(ROOT / "SPEC.md", root / "SPEC.md")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    if site_url:  # in place of the repository's (which takes EFFECTBENCH_SITE_URL)
        config = re.sub(r"(?m)^site_url: .*$", f"site_url: {site_url}", config)
        assert f"site_url: {site_url}" in config
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    (root / "site" / "withdrawn.yml").write_text(yaml.safe_dump(withdrawn), encoding="utf-8")
    return root


# -- one system on several screens: a real pack whose tasks each run on two substrates --------

SCREENS_PACK = "mockmed-screens"
SCREENS_BOARD = "spec1-mockmed-screens"
"""The table of a pack whose every task exists on the web and on the desktop (two boards)."""
SCREENS_SUBSTRATES = (Substrate.WEB, Substrate.DESKTOP)
SCREENS_ARMS = ("screen_only", "effect_verified", "always_halt")
"""Baselines run on both substrates in one bundle each (the same behaviour on both)."""
ONE_BUNDLE_MIX = "verifies_on_web"
"""A system in one bundle that checks its effect on the web and trusts the screen on the desktop."""
TWO_BUNDLE_MIX = "pixel_trusting"
"""A system submitted as one bundle per substrate: effect_verified on the web, retry_on_error
on the desktop."""


class ScreensPack(MockMedProvider):
    """The MockMed anchor's nine tasks, each on the web (``screens::ok``) and on the desktop
    (``screens::ok@desktop``): a real pack whose systems run the same tasks on two substrates."""

    name = SCREENS_PACK

    def __init__(self) -> None:
        super().__init__()
        self._tasks = tuple(
            t.model_copy(
                update={
                    "task_id": sub.variant_id(
                        t.task_id.replace("mockmed::", "screens::"), Substrate.WEB
                    ),
                    "substrate": sub,
                }
            )
            for t in self._tasks
            for sub in SCREENS_SUBSTRATES
        )

    def manifest(self) -> dict[str, Any]:
        return manifest_of(SCREENS_PACK, self._tasks)


class BySubstrate:
    """A system that acts as one shipped baseline on some substrates and another elsewhere."""

    def __init__(self, name: str, pack: ScreensPack, on: dict[Substrate, str]) -> None:
        self.name = name
        self._by = {sub: get_baseline(b, pack) for sub, b in on.items()}

    def run(
        self, task: AgentTask, env: EnvHandle, params: Mapping[str, Any]
    ) -> AgentReport | Attempt:
        return self._by[Substrate(task.display.surface)].run(task, env, params)


def _screens_bundle(
    subs: Path,
    folder: str,
    name: str,
    sut: SystemUnderTest,
    baseline: str | None,
    on: Sequence[Substrate],
) -> Path:
    pack = ScreensPack()
    tasks = [t for t in pack.tasks() if t.substrate in on]
    run = evaluate(sut, pack, trials=10, tasks=tasks)
    sub = make_submission(
        run,
        pack,
        SystemInfo(name=name, baseline=baseline),
        trials=10,
        split=Split.DEV,
        started_at="2026-11-30T00:00:00Z",
        finished_at="2026-11-30T00:01:00Z",
    )
    return write_submission(subs / f"2026-12-01_{folder}", sub, run.rows)


def screens_bundles(subs: Path) -> dict[str, list[Path]]:
    """Real runs on :class:`ScreensPack` (register it first), by system name: three baselines
    on both substrates in one bundle each, :data:`ONE_BUNDLE_MIX` in one bundle and
    :data:`TWO_BUNDLE_MIX` as one bundle per substrate."""
    pack = ScreensPack()
    out: dict[str, list[Path]] = {}
    for arm in SCREENS_ARMS:
        out[f"{arm} two-substrate"] = [
            _screens_bundle(
                subs,
                f"{arm}-screens",
                f"{arm} two-substrate",
                get_baseline(arm, pack),
                arm,
                SCREENS_SUBSTRATES,
            )
        ]
    mix = BySubstrate(
        ONE_BUNDLE_MIX, pack, {Substrate.WEB: "effect_verified", Substrate.DESKTOP: "screen_only"}
    )
    out[ONE_BUNDLE_MIX] = [
        _screens_bundle(subs, "verifies-on-web", ONE_BUNDLE_MIX, mix, None, SCREENS_SUBSTRATES)
    ]
    out[TWO_BUNDLE_MIX] = [
        _screens_bundle(
            subs,
            f"pixel-trusting-{sub.value}",
            TWO_BUNDLE_MIX,
            get_baseline(arm, pack),
            None,
            (sub,),
        )
        for sub, arm in ((Substrate.WEB, "effect_verified"), (Substrate.DESKTOP, "retry_on_error"))
    ]
    return out


def registered_body(script: str) -> str:
    """The JSON a registering script holds (``window.X[name] = VALUE;``, written by
    ``effectbench.site._scripts.registering``); a part's, packed as a base64 string of gzip
    (``effectbench.site._scripts.packed``), unpacked."""
    body = script[script.index("] = ") + 4 :].rstrip().removesuffix(";")
    if body.startswith('"'):  # a packed part
        return gzip.decompress(base64.b64decode(json.loads(body))).decode("utf-8")
    return body


def registered(script: str | Path) -> Any:
    """The data a registering script holds: its text, or the file at a path."""
    text = script.read_text(encoding="utf-8") if isinstance(script, Path) else script
    return json.loads(registered_body(text))
