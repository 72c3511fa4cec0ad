"""The maps a newcomer reads are true: the README's layout block and the verifier's module map.

The README's ``## Layout`` block names folders, each on the line that starts with it (an
indented ``name/`` under ``effectbench/`` is one of its subpackages): every folder it names
exists, every top-level folder of the repository is named, and so is every package of the
engine. The verifier's docstring names each of its modules (``:mod:`verifier.NAME```): every
one it names exists, and every module of the verifier is named.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import verifier

ROOT = Path(__file__).resolve().parents[1]


def layout_folders(readme: str) -> list[str]:
    """Return the folders the README's layout block names (``effectbench/run/`` for an indented
    ``run/`` under ``effectbench/``), in order."""
    block = readme.split("## Layout\n\n```\n", 1)[1].split("```", 1)[0]
    named, parent = [], ""
    for line in block.splitlines():
        found = re.match(r"^( *)([\w.-]+/)\s", line + " ")
        if found is None:
            continue
        indent, name = found.groups()
        if indent:
            named.append(parent + name)
        else:
            parent = name
            named.append(name)
    return named


def test_the_readme_layout_names_every_folder_and_only_folders_that_exist() -> None:
    named = layout_folders((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "effectbench/run/" in named and "effectbench/kit/" in named
    assert [n for n in named if not (ROOT / n).is_dir()] == []
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    top = {p.split("/")[0] + "/" for p in tracked if "/" in p and not p.startswith(".")}
    assert sorted(top - set(named)) == []
    engine = {
        f"effectbench/{p.name}/"
        for p in (ROOT / "effectbench").iterdir()
        if (p / "__init__.py").is_file()
    }
    assert sorted(engine - set(named)) == []


def test_the_verifiers_module_map_names_every_module() -> None:
    doc = verifier.__doc__ or ""
    named = set(re.findall(r":mod:`verifier\.(\w+)`", doc))
    folder = Path(verifier.__file__).parent
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(named - modules) == []
    assert sorted(modules - named) == []


def test_the_layout_reader_reads_a_nested_block() -> None:
    text = "## Layout\n\n```\ntop/   a\n  sub/   b\n               more words\nnext/  c\n```\n"
    assert layout_folders(text) == ["top/", "top/sub/", "next/"]
