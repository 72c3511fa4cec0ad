"""``effectbench verify`` imports what verification needs: the declared pack only, no pandas.

A command's start is the modules it imports: a 9,000-row bundle verifies in a
tenth of a second, so every heavy import shows in a user's wait. The pack
registry names its packs without importing them; each pack is imported when a
bundle declares it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_VERIFY_AND_LIST_MODULES = """
import json, sys
from effectbench.cli import main
code = main(["verify", "--allow-unsigned", sys.argv[1]])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _verify_in_a_fresh_process(bundle: Path) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _VERIFY_AND_LIST_MODULES, str(bundle)],
        capture_output=True,
        text=True,
        check=False,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return int(result["code"]), set(result["modules"])


def test_verifying_a_mockmed_bundle_imports_neither_the_clinic_nor_pandas() -> None:
    """The reference MockMed bundle is verified (and re-run) with its own pack only."""
    code, modules = _verify_in_a_fresh_process(ROOT / "submissions" / "2026-12-01_screen-only")
    assert code == 0
    assert "effectbench.packs.mockmed" in modules
    assert not {m for m in modules if m.startswith("effectbench.packs.clinic")}
    assert not {m for m in modules if m.split(".")[0] in ("pandas", "pyarrow", "sigstore")}


GUI = ("playwright", "gi", "Xlib", "PIL", "mcp")
"""Top-level packages of the screen and agent stacks (the web, desktop and mcp extras)."""


def _gui(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in GUI or m.startswith(WEB_APP)}


WEB_APP = "effectbench.packs.clinic.web"


def test_importing_the_verifier_loads_no_gui_stack_and_no_pack() -> None:
    code = "import json, sys, verifier.api; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    modules = set(json.loads(done.stdout))
    assert _gui(modules) == set()
    assert not {m for m in modules if m.startswith("effectbench.packs.")}


def test_verifying_a_clinic_bundle_loads_no_gui_stack() -> None:
    """The clinic's rows are re-scored and sampled rows re-run on the api substrate without a
    browser, an X server or the web app being imported."""
    bundle = next((ROOT / "submissions").glob("*_screen-only-clinic"))
    code, modules = _verify_in_a_fresh_process(bundle)
    assert code == 0
    assert "effectbench.packs.clinic" in modules
    assert _gui(modules) == set()
