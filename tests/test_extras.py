"""A light core: the screen stacks, MCP, inspect and Dask are extras, each missing one line.

The core install verifies bundles, builds the site and runs packs on the api substrate. A
child Python whose import system refuses every extra's modules (as an install of the core
alone would) runs the core's commands, and each extra's command says which extra to install.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from effectbench.extras import EXTRAS

ROOT = Path(__file__).resolve().parents[1]
EXTRA_MODULES = (
    "playwright", "mcp", "PIL", "Xlib", "gi", "distributed", "inspect_ai", "atif", "anthropic"
)  # fmt: skip
"""The top-level modules only the extras install."""

CORE_ONLY = f"""
import sys
class _CoreOnly:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {EXTRA_MODULES!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _CoreOnly())
from effectbench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _core(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CORE_ONLY, *args],
        capture_output=True, text=True, cwd=cwd, timeout=600, env={**os.environ},
    )  # fmt: skip


def test_the_core_dependencies_hold_no_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"]).lower()
    # Pillow is the core's: the site re-encodes every key frame it publishes (bounded size)
    assert "pillow" in core
    for heavy in ("playwright", "mcp", "python-xlib", "pygobject", "distributed"):
        assert heavy not in core, heavy
    declared = set(project["optional-dependencies"]) - {"test", "dev"}
    assert declared == set(EXTRAS)


def test_the_core_verifies_runs_the_api_substrate_and_lists_packs(tmp_path: Path) -> None:
    bundle = next((ROOT / "submissions").glob("*_screen-only-clinic"))
    done = _core("verify", "--allow-unsigned", str(bundle))
    assert done.returncode == 0, done.stderr
    done = _core("run", "--pack", "clinic", "--baseline", "screen_only", "--trials", "1",
                 "--progress", "off")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "SWER" in done.stdout
    assert "clinic" in _core("packs").stdout


@pytest.mark.parametrize(
    ("args", "extra", "module"),
    [
        (("run", "--pack", "clinic", "--substrate", "web", "--baseline", "screen_only"), "web",
         "playwright"),
        (("run", "--pack", "clinic", "--substrate", "desktop", "--baseline", "screen_only"),
         "desktop", "Xlib"),
        (("mcp", "--pack", "clinic", "--task", "clinic::clean_draft@web", "--trial", "0"), "mcp",
         "mcp"),
        (("run", "--baseline", "screen_only", "--executor", "dask", "--scheduler",
          "tcp://127.0.0.1:9"), "dask", "distributed"),
        (("import-inspect", "log.eval", "--out", "x", "--name", "n"), "inspect", "inspect-ai"),
        (("export", "b", "--format", "atif", "--out", "x"), "export", "atif"),
        (("export", "b", "--format", "inspect", "--out", "x"), "inspect", "inspect_ai"),
    ],
)  # fmt: skip
def test_a_missing_extra_is_one_line_naming_it(
    args: tuple[str, ...], extra: str, module: str, tmp_path: Path
) -> None:
    done = _core(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert f"needs the {extra} extra ({module} is not installed)" in lines[0]
    assert f"pip install 'effectbench[{extra}]'" in lines[0]


@pytest.mark.postgres
def test_the_core_runs_the_ticketing_pack_with_its_own_distribution(tmp_path: Path) -> None:
    listed = _core("packs").stdout
    assert "ticketing\teffectbench-ticketing " in listed
    done = _core("run", "--pack", "ticketing", "--baseline", "screen_only", "--trials", "1",
                 "--progress", "off", "--json", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = _core("pack", "check", "ticketing", "--json", cwd=tmp_path)
    report = json.loads(done.stdout)
    # Every audit passes but blindness: the written ticketing tasks put 2 of their 4 C3 tasks
    # on the outage-credit workflow (6 of the other 23), so the declared effect's surface
    # predicts C3 a little above the 0.65 the audit allows (issue 54 re-draws the catalogue).
    # The audit is run here for real and must name exactly that.
    assert done.returncode == 1, done.stderr
    assert {f["id"] for f in report["findings"]} == {"pack.blindness"}, report["findings"]
    leaking = [
        t for t in report["blindness"]["targets"] if t["auroc"] is not None and t["auroc"] > 0.65
    ]
    assert [t["target"] for t in leaking] == ["C3_optimistic_then_reject"], leaking
