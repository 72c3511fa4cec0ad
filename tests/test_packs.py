"""Packs are plug-ins: found through the ``effectbench.packs`` entry points, loaded when named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.distributions import install

from effectbench.errors import UsageError
from effectbench.packs import (
    aliases,
    canonical_pack,
    get_pack,
    installed,
    register,
    registry_name,
)
from effectbench.packs.mockmed import MockMedProvider

EFFECTBENCH = str(Path(sys.executable).with_name("effectbench"))


def test_the_built_in_packs_register_through_the_entry_point_group() -> None:
    packs = installed()
    assert {"clinic", "mockmed", "mockmed-anchor"} <= set(packs)
    assert {packs[n].distribution for n in ("clinic", "mockmed")} == {"effectbench"}
    assert aliases("mockmed") == ["mockmed", "mockmed-anchor"]
    assert canonical_pack("mockmed") == canonical_pack("mockmed-anchor") == "mockmed-anchor"
    assert canonical_pack("no-such-pack") == "no-such-pack"
    assert registry_name(MockMedProvider) in {"mockmed", "mockmed-anchor"}


def test_listing_imports_no_pack_and_naming_one_imports_only_it() -> None:
    code = textwrap.dedent(
        """
        import sys
        from effectbench.packs import get_pack, installed
        installed()
        assert not [m for m in sys.modules if m.startswith("effectbench.packs.")], sys.modules
        get_pack("mockmed")
        assert not [m for m in sys.modules if m.startswith("effectbench.packs.clinic")]
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


def test_an_unknown_pack_names_the_installed_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown pack 'nope'; installed packs: clinic, "):
        get_pack("nope")


def test_a_pack_registered_in_this_process_is_a_pack_while_registered() -> None:
    class Renamed(MockMedProvider):
        name = "renamed-anchor"

    with register("renamed-anchor", Renamed):
        assert isinstance(get_pack("renamed-anchor"), Renamed)
        assert registry_name(Renamed) == "renamed-anchor"
        with pytest.raises(UsageError, match="already installed"):
            with register("mockmed", Renamed):
                pass
    assert "renamed-anchor" not in installed()


THIRD = """
from effectbench.packs.mockmed import MockMedProvider

class ThirdPack(MockMedProvider):
    name = "thirdpack"
"""


def _distribution(root: Path) -> Path:
    """An installed distribution, as pip leaves one: a module and its dist-info."""
    install(
        root, "thirdpack", "0.3.1", {"thirdpack.py": THIRD}, {"thirdpack": "thirdpack:ThirdPack"}
    )
    return root


def test_another_distributions_pack_is_listed_and_runs(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    site = _distribution(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": str(site)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [EFFECTBENCH, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
        )

    listed = json.loads(cli("packs", "--json").stdout)
    assert {"names": ["thirdpack"], "distribution": "thirdpack", "version": "0.3.1",
            "provider": "thirdpack:ThirdPack"} in listed  # fmt: skip
    done = cli("run", "--pack", "thirdpack", "--baseline", "screen_only", "--trials", "1", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["swer"]["denominator"] == 9
    (site / "thirdpack.py").write_text("raise ImportError('its database driver is missing')\n")
    broken = cli("run", "--pack", "thirdpack", "--baseline", "screen_only", "--trials", "1")
    assert broken.returncode == 2
    assert broken.stderr == (
        "effectbench: pack 'thirdpack' (thirdpack:ThirdPack, from thirdpack) cannot be loaded: "
        "its database driver is missing\n"
    )


def test_the_public_api_exports_exactly_what_it_imports() -> None:
    import ast

    import effectbench.api as api

    source = Path(api.__file__).read_text(encoding="utf-8")
    imported = {
        alias.asname or alias.name
        for node in ast.parse(source).body
        if isinstance(node, ast.ImportFrom) and node.module != "__future__"
        for alias in node.names
    }
    assert len(set(api.__all__)) == len(api.__all__) and set(api.__all__) == imported
    assert all(getattr(api, name) is not None for name in api.__all__)


# -- a broken plug-in is its own problem ------------------------------------------------------


def _cli(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [EFFECTBENCH, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600
    )


@pytest.mark.slow
def test_a_pack_that_fails_to_import_is_one_line_and_every_other_command_works(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    broken = "raise RuntimeError('its vendored driver needs glibc 2.99')\n"
    install(site, "brokenpack", "0.1.0", {"brokenpack.py": broken}, {"broken": "brokenpack:P"})
    listed = _cli(site, tmp_path, "packs")
    assert listed.returncode == 1
    (line,) = [ln for ln in listed.stdout.splitlines() if ln.startswith("broken\t")]
    assert line.endswith(
        "cannot be used: pack 'broken' (brokenpack:P, from brokenpack) cannot be loaded: "
        "RuntimeError('its vendored driver needs glibc 2.99')"
    )
    assert any(
        ln.startswith("mockmed / mockmed-anchor\teffectbench ") for ln in listed.stdout.splitlines()
    )
    assert json.loads(_cli(site, tmp_path, "packs", "--json").stdout)[0]["error"].startswith(
        "pack 'broken' "
    )
    assert _cli(site, tmp_path, "--help").returncode == 0
    helped = _cli(site, tmp_path, "run", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "broken: cannot be loaded (see effectbench packs)" in " ".join(helped.stdout.split())
    bundle = Path(__file__).resolve().parents[1] / "submissions" / "2026-12-01_screen-only"
    verified = _cli(site, tmp_path, "verify", str(bundle))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / bundle.name).symlink_to(bundle)
    root = str(bundle.parents[1])
    built = _cli(site, tmp_path, "site", "build", "--root", root, "--submissions", "subs",
                 "--out", "public", "--cache-dir", "cache", "--workers", "1")  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "public" / "index.html").is_file()


def test_two_distributions_claiming_one_pack_name_is_an_error_naming_both(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    install(site, "rival-anchor", "2.0", {"rival.py": THIRD}, {"mockmed": "rival:ThirdPack"})
    done = _cli(site, tmp_path, "run", "--pack", "mockmed", "--baseline", "screen_only")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "effectbench: pack name 'mockmed' is claimed by 2 distributions: "
    )
    assert "rival-anchor 2.0 (rival:ThirdPack)" in done.stderr
    assert (
        "effectbench " in done.stderr
        and "(effectbench.packs.mockmed:MockMedProvider)" in done.stderr
    )
    assert len(done.stderr.strip().splitlines()) == 1
    listed = _cli(site, tmp_path, "packs")
    assert (
        listed.returncode == 1
        and "rival-anchor 2.0 (rival:ThirdPack) and effectbench" in listed.stdout
    )
    again = _cli(site, tmp_path, "run", "--pack", "mockmed-anchor", "--baseline", "screen_only",
                 "--trials", "1")  # fmt: skip
    assert again.returncode == 0, again.stderr  # the other name of the shipped pack still works
