"""Real site inputs: the reference bundles plus a hostile-named, a tampered and a preview bundle."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from effectbench.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "submissions"


def board_key_of(bundle: Path) -> str:
    """The anchor the site gives a bundle's board: ``spec<major>-<pack>``."""
    sub = json.loads((bundle / "submission.json").read_text(encoding="utf-8"))
    return f"spec{sub['spec_version'].split('.')[0]}-{sub['pack']['name']}".lower()


REFERENCE_BOARDS: dict[str, list[str]] = {}
"""Board anchor -> folder names of the reference bundles on that board."""
for _bundle in sorted(REFERENCE.iterdir()):
    if (_bundle / "submission.json").is_file():
        REFERENCE_BOARDS.setdefault(board_key_of(_bundle), []).append(_bundle.name)
N_REFERENCE = sum(len(names) for names in REFERENCE_BOARDS.values())
MOCKMED_BOARD = "spec1-mockmed-anchor"
"""The MockMed board: the four MockMed reference bundles and the <script>-named one."""
CLINIC_BOARD = "spec1-clinic"
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
    subs = base / "submissions"
    shutil.copytree(REFERENCE, subs)
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


def site_root(base: Path, withdrawn: list[dict[str, str]]) -> Path:
    """A copy of the repository's site sources whose withdrawn.yml lists ``withdrawn``."""
    root = base / "root"
    shutil.copytree(ROOT / "site", root / "site")
    shutil.copy(ROOT / "SPEC.md", root / "SPEC.md")
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    (root / "site" / "withdrawn.yml").write_text(yaml.safe_dump(withdrawn), encoding="utf-8")
    return root
