"""Hold every function of the project at cyclomatic complexity 15 or below (``make lint``).

Radon measures each function and method of every Python file of the repository (nested
functions on their own, named ``outer.inner``; a class's methods ``Class.method``). A function
above :data:`LIMIT` fails the gate unless ``scripts/complexity_ratchet.txt`` lists it with its
complexity as it is: the functions still to be simplified. The list only shrinks: the gate
also fails when a listed function is now at 15 or below, has disappeared, or measures other
than its listed figure, so an edit that simplifies one must take it off the list (or lower its
figure), and one that makes it worse fails.

``--update`` rewrites the list after a simplification: it drops what is no longer above 15 and
lowers a figure that went down; it adds nothing and raises nothing (those still fail).

usage: python scripts/complexity.py [--update] [--root DIR] [--ratchet FILE]
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from radon.visitors import ComplexityVisitor

ROOT = Path(__file__).resolve().parents[1]
RATCHET = Path("scripts") / "complexity_ratchet.txt"
LIMIT = 15
SKIPPED_DIRS = frozenset({"__pycache__", "build", "public", "node_modules"})
"""Folders never read (besides hidden ones, ``.venv*`` among them): ruff's exclusions."""
SKIPPED_PATHS = frozenset({"site/assets/vendor", "tests/vendor"})
"""Vendored third-party code, relative to the root."""
HEADER = """\
# The functions still above cyclomatic complexity 15, each with its complexity as it is
# (scripts/complexity.py; `make lint` fails on any other function above 15, and on an entry
# that no longer matches the code). This list only shrinks: simplify a function, then run
# `python scripts/complexity.py --update` to drop or lower its entry.
"""


@dataclass(frozen=True)
class Measure:
    """One function's complexity: ``key`` (``path::qualified.name``) and where it starts."""

    key: str
    path: str
    line: int
    complexity: int

    def where(self) -> str:
        return f"{self.path}:{self.line}: {self.key.split('::', 1)[1]}"


def python_files(root: Path) -> Iterator[Path]:
    """Every ``.py`` file under ``root`` the linters read, in a stable order."""
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in SKIPPED_DIRS
            and not d.endswith(".egg-info")
            and (here / d).relative_to(root).as_posix() not in SKIPPED_PATHS
        )
        for name in sorted(files):
            if name.endswith(".py"):
                yield here / name


def _functions(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.AST]]:
    """Every function under ``node`` with its qualified name: methods, nested functions and
    the methods of classes defined in functions included."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}{child.name}", child
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def complexity(function: ast.AST) -> int:
    """Radon's cyclomatic complexity of one function (its nested functions not counted)."""
    (measured,) = ComplexityVisitor.from_ast(function).functions
    return int(measured.complexity)


def measure_file(path: Path, relative: str) -> list[Measure]:
    """Every function of one file; a name defined twice gets ``#2``, ``#3``... in order."""
    seen: dict[str, int] = {}
    out: list[Measure] = []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for name, function in _functions(tree, ""):
        seen[name] = seen.get(name, 0) + 1
        key = f"{relative}::{name}" + (f"#{seen[name]}" if seen[name] > 1 else "")
        line = getattr(function, "lineno", 0)
        out.append(Measure(key, relative, line, complexity(function)))
    return out


def measure(root: Path) -> list[Measure]:
    """Every function above :data:`LIMIT` under ``root``."""
    found: list[Measure] = []
    for path in python_files(root):
        relative = path.relative_to(root).as_posix()
        found.extend(m for m in measure_file(path, relative) if m.complexity > LIMIT)
    return found


def read_ratchet(path: Path) -> dict[str, int]:
    """The listed functions and their figures (``path::name complexity`` a line)."""
    listed: dict[str, int] = {}
    if not path.exists():
        return listed
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, figure = line.rpartition(" ")
        if "::" not in key or not figure.isdigit() or key in listed:
            raise SystemExit(f"{path}:{number}: not a `path::name complexity` line: {raw!r}")
        listed[key] = int(figure)
    return listed


def ratchet_text(listed: dict[str, int]) -> str:
    return HEADER + "".join(f"{key} {figure}\n" for key, figure in sorted(listed.items()))


def problems(found: Sequence[Measure], listed: dict[str, int]) -> tuple[list[str], list[str]]:
    """What fails the gate: (what only ``--update`` may fix, what no list edit excuses)."""
    shrinkable: list[str] = []
    failing: list[str] = []
    by_key = {m.key: m for m in found}
    for m in found:
        figure = listed.get(m.key)
        if figure is None:
            failing.append(
                f"{m.where()} has complexity {m.complexity}, above {LIMIT}: simplify it "
                "(extract named helpers, a table for an if-chain)"
            )
        elif m.complexity > figure:
            failing.append(
                f"{m.where()} has complexity {m.complexity}, up from its listed {figure}: "
                "simplify it"
            )
        elif m.complexity < figure:
            shrinkable.append(
                f"{m.where()} has complexity {m.complexity}, down from its listed {figure}: "
                "lower its entry (--update)"
            )
    for key, figure in sorted(listed.items()):
        if key not in by_key:
            shrinkable.append(
                f"{key} (listed at {figure}) is no longer above {LIMIT} or is gone: "
                "take it off the list (--update)"
            )
    return shrinkable, failing


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--ratchet", type=Path, help=f"default: ROOT/{RATCHET.as_posix()}")
    parser.add_argument("--update", action="store_true", help="drop or lower entries only")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    ratchet: Path = args.ratchet or root / RATCHET
    found = measure(root)
    listed = read_ratchet(ratchet)
    shrinkable, failing = problems(found, listed)
    if args.update and shrinkable:
        kept = {m.key: m.complexity for m in found if m.key in listed}
        kept = {key: min(figure, listed[key]) for key, figure in kept.items()}
        ratchet.write_text(ratchet_text(kept), encoding="utf-8")
        print(f"complexity: {ratchet} now lists {len(kept)} function(s) (was {len(listed)})")
        shrinkable, listed = [], kept
    for line in shrinkable + failing:
        print(f"complexity: {line}", file=sys.stderr)
    if shrinkable or failing:
        return 1
    print(f"complexity: no function above {LIMIT} but the {len(listed)} listed in {ratchet.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
