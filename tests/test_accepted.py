"""The accepted packs: only listed packs of other distributions reach the board, as listed.

A third-party pack is installed as pip would leave it (``support.distributions``); a bundle of
it is made with ``effectbench submit`` and verified against lists that do not hold it, hold
another version, or hold other code: each refused with a ``pack.not_accepted`` finding that says
how a pack gets on the list; a list holding it as installed (``effectbench packs --entry``)
accepts it. The list the verifier ships is generated from ``packs/`` and is what the workflows
install (``scripts/install_packs.py``), which refuses a folder whose code is not the listed one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.distributions import install

from verifier.accepted import (
    ACCEPTED_FILE,
    HOW_TO_JOIN,
    accepted_listing,
    load_accepted,
    package_digest,
)

ROOT = Path(__file__).resolve().parents[1]
EFFECTBENCH = str(Path(sys.executable).with_name("effectbench"))
THIRD = """
from effectbench.packs.mockmed import MockMedProvider

class ThirdPack(MockMedProvider):
    name = "thirdpack"
"""


def _cli(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [EFFECTBENCH, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600
    )


@pytest.fixture(scope="module")
def third(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A third-party pack installed in a site folder, and an unsigned bundle of it."""
    work = tmp_path_factory.mktemp("accepted")
    site = work / "site"
    site.mkdir()
    install(
        site, "thirdpack", "0.3.1", {"thirdpack.py": THIRD}, {"thirdpack": "thirdpack:ThirdPack"}
    )
    made = _cli(site, work, "submit", "--pack", "thirdpack", "--baseline", "screen_only",
                "--trials", "3", "--name", "Third screen-only", "--out", "subs")  # fmt: skip
    assert made.returncode == 0, made.stderr
    (bundle,) = (work / "subs").iterdir()
    return work, site, bundle


def _verify(third: tuple[Path, Path, Path], listed: dict[str, object] | None) -> str:
    work, site, bundle = third
    args = ["verify", "--allow-unsigned", "--no-reproduce", str(bundle)]
    if listed is not None:
        (work / "list.json").write_text(json.dumps({"packs": [listed]}))
        args[1:1] = ["--accepted", str(work / "list.json")]
    done = _cli(site, work, *args)
    return done.stdout + done.stderr


def _entry(third: tuple[Path, Path, Path]) -> dict[str, object]:
    work, site, _ = third
    done = _cli(site, work, "packs", "--entry", "thirdpack")
    assert done.returncode == 0, done.stderr
    (entry,) = json.loads(done.stdout)["packs"]
    assert entry["distribution"] == "thirdpack" and entry["version"] == "0.3.1"
    assert entry["digest"] == package_digest(site / "thirdpack.py")
    return dict(entry)


def test_a_bundle_of_a_pack_not_on_the_list_is_refused_saying_how_to_get_on_it(
    third: tuple[Path, Path, Path],
) -> None:
    out = _verify(third, None)
    assert "pack.not_accepted" in out and "REFUSED" in out
    assert "pack 'thirdpack' (thirdpack 0.3.1) is not on the accepted list;" in out
    assert HOW_TO_JOIN[:60] in " ".join(out.split())


def test_a_list_holding_the_pack_as_installed_accepts_its_bundle(
    third: tuple[Path, Path, Path],
) -> None:
    out = _verify(third, _entry(third))
    assert "pack.not_accepted" not in out and "1 of 1 accepted" in out


def test_another_version_on_the_list_is_refused(third: tuple[Path, Path, Path]) -> None:
    out = _verify(third, {**_entry(third), "version": "0.3.0"})
    assert "pack.not_accepted" in out
    assert "installed from thirdpack 0.3.1, the accepted list has thirdpack 0.3.0" in out


def test_installed_code_other_than_the_listed_digest_is_refused(
    third: tuple[Path, Path, Path],
) -> None:
    out = _verify(third, {**_entry(third), "digest": "sha256:" + "0" * 64})
    assert "pack.not_accepted" in out
    assert "it is not the code that was accepted" in " ".join(out.split())


def test_the_shipped_list_is_the_packs_folder_and_holds_the_ticketing_pack() -> None:
    """Both packs of the ticketing distribution (its written tasks and its generated catalogue)
    are accepted, by the digest of the one package that serves them."""
    accepted = load_accepted(ACCEPTED_FILE)
    assert set(accepted) == {"ticketing", "ticketing-generated"}
    digest = package_digest(ROOT / "packs" / "ticketing" / "effectbench_ticketing")
    for pack in accepted.values():
        assert (pack.distribution, pack.source) == ("effectbench-ticketing", "packs/ticketing")
        assert pack.digest == digest
    assert ACCEPTED_FILE.read_text() == accepted_listing(ROOT)


def test_install_packs_refuses_a_folder_whose_code_is_not_the_listed_one(tmp_path: Path) -> None:
    shutil.copytree(
        ROOT / "packs",
        tmp_path / "packs",
        ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"),
    )
    store = tmp_path / "packs" / "ticketing" / "effectbench_ticketing" / "store.py"
    store.write_text(store.read_text() + "\n# a change nobody reviewed\n")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "install_packs.py"), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1  # SystemExit with a message
    assert "install-packs: refused: packs/ticketing holds code of digest sha256:" in done.stderr
    assert "a changed pack is accepted by a pull request that updates its entry" in done.stderr


def test_the_workflows_and_make_site_install_the_accepted_packs_with_the_one_script() -> None:
    workflows = ROOT / ".github" / "workflows"
    for name in ("deploy-site.yml", "verify-pr.yml"):
        text = (workflows / name).read_text()
        assert "bash scripts/install-verifier " in text, name
    installer = (ROOT / "scripts" / "install-verifier").read_text()
    assert installer.count('"$py" scripts/install_packs.py --locked\n') == 1
    packs = (workflows / "packs.yml").read_text()
    assert "packs/**" in packs and "scripts/install_packs.py --pack-check" in packs
    setup = (ROOT / "scripts" / "setup-venv").read_text()
    assert setup.count('"$venv/bin/python" scripts/install_packs.py') == 1
