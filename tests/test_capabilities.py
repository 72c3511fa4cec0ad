"""A pack's capabilities are protocols of ``effectbench.seam``, asked with ``isinstance``.

No module of the engine or the verifier finds what a pack offers by probing an attribute
name (``getattr(pack, "reachable", None)``, ``hasattr(provider, "close")``): that would
be a capability no protocol declares, which a pack author cannot learn from ``seam.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBES = ("getattr", "hasattr")


def _subject(node: ast.expr) -> str | None:
    """Return the name an expression ends in (``pack``, ``self._provider``, ``type(pack)``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        if node.func.id == "type":
            return _subject(node.args[0])
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_pack(name: str) -> bool:
    bare = name.lstrip("_").lower()
    return any(bare.startswith(w) or bare.endswith(w) for w in ("pack", "provider"))


def probes(source: str) -> list[tuple[int, str]]:
    """Return (line, call) for every ``getattr``/``hasattr`` of a literal name on a pack."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in PROBES
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            continue
        subject = _subject(node.args[0])
        if subject is not None and _is_pack(subject):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_probes_a_pack_for_a_capability() -> None:
    sources = sorted((ROOT / "effectbench").rglob("*.py")) + sorted(
        (ROOT / "verifier").rglob("*.py")
    )
    assert len(sources) > 50
    found = [
        f"{path.relative_to(ROOT)}:{line}: {call} (declare a protocol in effectbench/seam.py)"
        for path in sources
        for line, call in probes(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.parametrize(
    "source",
    [
        'hook = getattr(pack, "reachable", None)',
        'if getattr(self._provider, "deterministic", False): pass',
        'close = getattr(type(pack), "close")',
        'ok = hasattr(provider, "red_team")',
        'x = getattr(self.pack, "substrates", ())',
    ],
)
def test_the_check_sees_each_kind_of_probe(source: str) -> None:
    assert len(probes(source)) == 1


@pytest.mark.parametrize(
    "source",
    [
        'getattr(args, "substrate", None)',
        "getattr(pack, name)",
        'getattr(env, "zoom", None)',
        "isinstance(pack, Closable)",
    ],
)
def test_what_is_not_a_pack_probe_passes(source: str) -> None:
    assert probes(source) == []
