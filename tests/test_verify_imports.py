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

from effectbench import packs

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
    code, modules = _verify_in_a_fresh_process(ROOT / "submissions" / "2026-11-30_screen-only")
    assert code == 0
    assert "effectbench.packs.mockmed" in modules
    assert not {m for m in modules if m.startswith("effectbench.packs.clinic")}
    assert not {m for m in modules if m.split(".")[0] in ("pandas", "pyarrow", "sigstore")}


def test_the_registry_names_each_pack_as_its_class_does() -> None:
    """The suite names the registry knows without importing a pack are the classes' own."""
    assert set(packs.CLASSES) == set(packs.SUITE_NAMES)
    for key, factory in packs.PACKS.items():
        assert packs.SUITE_NAMES[key] == factory.name  # type: ignore[attr-defined]
        assert packs.canonical_pack(key) == factory.name  # type: ignore[attr-defined]
