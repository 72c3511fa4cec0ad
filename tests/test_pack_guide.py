"""docs/pack-authors.md: every command in it runs, in order, on the files it shows.

The guide's titled code blocks are written into a temporary folder (the pack's own
folder, ``shelf/``, beside a link ``effectbench`` to this repository), and every command
of its ``sh`` blocks runs there through bash, with ``.venv/bin`` first on ``PATH``. Three
things differ from an author's machine, and only these:

* ``python -m pip install ./shelf`` is done as pip would leave it, without building or
  touching the shared environment: the modules and a dist-info (``METADATA`` and
  ``entry_points.txt`` from the guide's ``pyproject.toml``) in a folder on ``PYTHONPATH``;
* ``sign`` gets an identity token and ``sign``, ``verify`` and ``site build`` the trust
  config of the tests' private Sigstore instance (instead of the public one);
* ``site build`` keeps its cache in the temporary folder and builds in one process.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from sigstore_testroot import shared_instance

import effectbench.seam as seam

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "pack-authors.md"
BIN = Path(sys.executable).parent
FILE_BLOCK = re.compile(r'```[a-z]+ title="([^"]+)"\n(.*?)```', re.S)
SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
PIP_INSTALL = re.compile(r"^python -m pip install (\S+)$")


def guide_files(text: str) -> dict[str, str]:
    """Return the guide's titled code blocks: relative path -> content."""
    return {path: body for path, body in FILE_BLOCK.findall(text)}


def guide_commands(text: str) -> list[str]:
    """Return every command line of the guide's ``sh`` blocks, in order."""
    out = []
    for block in SH_BLOCK.findall(text):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            code = line.split("  #", 1)[0].strip()
            if code and not code.startswith("#"):
                out.append(code)
    return out


def install(project: Path, site: Path) -> None:
    """Leave ``project``'s distribution in ``site`` as ``pip install`` would (no build)."""
    meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    name, version = meta["project"]["name"], meta["project"]["version"]
    for module in meta["tool"]["setuptools"]["py-modules"]:
        shutil.copy(project / f"{module}.py", site / f"{module}.py")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    groups = meta["project"]["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
            for group, points in groups.items()
        )
    )


@pytest.mark.slow
def test_every_command_of_the_guide_runs(tmp_path: Path) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    work, site = tmp_path / "work", tmp_path / "site"
    work.mkdir()
    site.mkdir()
    (work / "effectbench").symlink_to(ROOT)
    for relative, body in guide_files(text).items():
        path = work / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    instance = shared_instance()
    trust = ["--trust-config", str(instance.trust_config_path)]
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(site),
    }
    outputs: dict[str, str] = {}
    commands = guide_commands(text)
    for command in commands:
        pip = PIP_INSTALL.match(command)
        if pip:
            install(work / pip[1], site)
            continue
        extra: list[str] = []
        if command.startswith("effectbench sign "):
            extra = ["--identity-token", instance.email_token("you@example.org"), *trust]
        elif command.startswith(("effectbench verify ", "effectbench site build ")):
            extra = trust
        if command.startswith("effectbench site build "):
            extra += ["--cache-dir", str(tmp_path / "cache"), "--workers", "1"]
        line = command + "".join(f" '{e}'" for e in extra)
        done = subprocess.run(
            ["bash", "-c", line], cwd=work, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
        outputs[command] = done.stdout + done.stderr
    assert len(commands) == 11
    assert "shelf\tshelf 0.1.0\tshelf_pack:ShelfProvider" in outputs["effectbench packs"]
    assert outputs["effectbench pack check shelf"].startswith(
        "pack shelf passes (3 tasks on api, 0 sequestered; 42 episodes"
    )
    (bundle,) = (work / "submissions").iterdir()
    assert (bundle / "submission.sigstore.json").is_file()
    verified = next(v for k, v in outputs.items() if k.startswith("effectbench verify "))
    assert "RANKED" in verified and "re-ran 'effect_verified': all 9 rows identical" in verified
    board = (work / "public" / "index.html").read_text(encoding="utf-8")
    assert "Shelf effect-verified" in board and "shelf" in board


def test_the_guide_documents_every_capability_protocol() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    protocols = [
        name
        for name, obj in vars(seam).items()
        if inspect.isclass(obj) and getattr(obj, "_is_runtime_protocol", False)
    ]
    capabilities = [p for p in protocols if p != "SystemUnderTest"]
    assert len(capabilities) >= 9
    for name in capabilities:
        assert f"| `{name}` |" in text, name


def test_the_guides_pack_imports_only_the_public_api() -> None:
    (source,) = [b for p, b in guide_files(GUIDE.read_text()).items() if p.endswith(".py")]
    imported = re.findall(r"^from (\S+) import", source, re.M)
    assert [m for m in imported if m.startswith("effectbench")] == ["effectbench.api"]
