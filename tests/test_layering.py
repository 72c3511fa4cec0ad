"""One layering, enforced: engine <- verifier <- site <- command line.

Every module's imports are read with :mod:`ast` (those inside functions and
``TYPE_CHECKING`` blocks too, and ``importlib.import_module("...")`` calls), so
a lazy import cannot hide a cycle. A module may import its own layer and the
layers below it, never one above.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("engine", "verifier", "site", "cli")
"""Lowest first: each layer may import the ones before it."""


def layer(module: str) -> int | None:
    """Return the layer of ``module`` (an index into :data:`LAYERS`); None outside them."""

    def within(package: str) -> bool:
        return module == package or module.startswith(package + ".")

    if within("effectbench.cli"):
        return LAYERS.index("cli")
    if within("effectbench.site"):
        return LAYERS.index("site")
    if within("verifier"):
        return LAYERS.index("verifier")
    if within("effectbench"):
        return LAYERS.index("engine")
    return None


def module_name(path: Path) -> str:
    """Return the dotted name of a source file of the repository."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """Return (line, imported module) for every import in ``source``, wherever it stands."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # ``from effectbench import cli`` imports the submodule effectbench.cli
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """Return one line per import of ``module`` that reaches a layer above its own."""
    own = layer(module)
    if own is None:
        return []
    out = []
    seen: set[int] = set()  # one line per import statement, however many names it takes
    for line, target in imports(source, module, is_package):
        theirs = layer(target)
        if theirs is not None and theirs > own and line not in seen:
            seen.add(line)
            out.append(
                f"{module}:{line} imports {target}: the {LAYERS[own]} layer may not import "
                f"the {LAYERS[theirs]} layer"
            )
    return out


def test_no_module_imports_a_layer_above_its_own() -> None:
    found = []
    sources = sorted((ROOT / "effectbench").rglob("*.py")) + sorted(
        (ROOT / "verifier").rglob("*.py")
    )
    assert len(sources) > 50
    for path in sources:
        found += violations(
            path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py"
        )
    assert found == []


@pytest.mark.parametrize(
    ("module", "source", "bad"),
    [
        ("effectbench.run.runner", "import verifier.api", "verifier.api"),
        (
            "effectbench.metrics",
            "def f():\n    from effectbench.site import build_site",
            "effectbench.site",
        ),
        ("verifier.api", "from effectbench.cli import main", "effectbench.cli"),
        ("verifier.api", "from effectbench import cli", "effectbench.cli"),
        ("effectbench.site.build", "from ..cli import main", "effectbench.cli"),
        ("effectbench.baselines", "importlib.import_module('verifier.cli')", "verifier.cli"),
        (
            "effectbench.seam",
            "if TYPE_CHECKING:\n    from verifier.report import X",
            "verifier.report",
        ),
    ],
)
def test_the_check_sees_every_kind_of_upward_import(module: str, source: str, bad: str) -> None:
    (found,) = violations(source, module)
    assert f"imports {bad}:" in found


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("effectbench.cli._run", "import verifier.api\nfrom effectbench.site import build_site"),
        ("effectbench.site.build", "from verifier.report import BundleReport"),
        ("verifier.api", "from effectbench.run.runner import evaluate\nimport pandas"),
        ("effectbench.site._pages", "from . import _charts"),
    ],
)
def test_downward_and_outside_imports_pass(module: str, source: str) -> None:
    assert violations(source, module) == []


def test_no_test_module_imports_another() -> None:
    """Shared test helpers live in the ``support`` packages; test modules import only them."""
    tests = ROOT / "tests"
    found = []
    for path in sorted(tests.glob("test_*.py")):
        for line, target in imports(path.read_text(encoding="utf-8"), path.stem):
            if target.split(".")[0].startswith("test_"):
                found.append(f"tests/{path.name}:{line} imports {target}")
    assert found == []


CONTRACT = frozenset(
    {
        "effectbench.schema",
        "effectbench.effects",
        "effectbench.hashing",
        "effectbench.judge",
        "effectbench.classify",
        "effectbench.metrics",
        "effectbench.verdicts",
        "effectbench.attempts",
        "effectbench.manifest",
        "effectbench.showable",
        "effectbench._showable_table",
        "effectbench._version",
    }
)
"""SPEC's pure contract (the vocabulary, effects, judge, truth table, metrics, verdicts, hashes,
attempts, what may be shown): a leaf below the engine's orchestration (runner, executors,
journal, packs, screens) that imports nothing of the project but itself. A name that is a
package (``effectbench.metrics``) brings every module of it."""


def _engine_graph() -> dict[str, set[str]]:
    """Every engine module (site and command line excluded) and the engine modules it imports."""
    paths = {
        module_name(p): p
        for p in sorted((ROOT / "effectbench").rglob("*.py"))
        if layer(module_name(p)) == LAYERS.index("engine")
    }
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        deps = set()
        for _, target in imports(
            path.read_text(encoding="utf-8"), name, path.name == "__init__.py"
        ):
            while target and target not in paths:
                target = target.rpartition(".")[0]
            if target and target != name and target != "effectbench":
                deps.add(target)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Return every import cycle of ``graph`` (its strongly connected components of two or more)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_engine_has_no_import_cycle() -> None:
    """Lazy imports count too: a module imported inside a function is still depended on."""
    assert cycles(_engine_graph()) == []


def test_the_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def contract_modules(modules: set[str]) -> set[str]:
    """Return the modules of ``modules`` in the contract: a name of :data:`CONTRACT` or a module
    of a contract package (``effectbench.metrics.cost`` of ``effectbench.metrics``)."""
    return {m for m in modules if any(m == c or m.startswith(c + ".") for c in CONTRACT)}


def test_the_contract_is_a_leaf_below_orchestration() -> None:
    graph = _engine_graph()
    assert CONTRACT <= set(graph)
    contract = contract_modules(set(graph))
    assert "effectbench.metrics.value" in contract  # a package's modules are in it too
    escapes = {m: sorted(graph[m] - contract) for m in contract if graph[m] - contract}
    assert escapes == {}


def facade_names(source: str) -> list[tuple[int, str]]:
    """Return (line, name) for each name ``source`` takes from the package root's facade
    (``from effectbench import SPEC_VERSION``), submodules (``from effectbench import cli``)
    excepted."""
    root = ROOT / "effectbench"
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "effectbench":
            for alias in node.names:
                if not (root / alias.name).is_dir() and not (root / f"{alias.name}.py").is_file():
                    found.append((node.lineno, alias.name))
    return found


def test_no_module_takes_a_name_from_the_facade() -> None:
    """The package root is the top floor: it re-exports the public names for users, so a module
    of the project importing a name from it would run back up (the version lives in the leaf
    ``effectbench._version``; the verdict rule in the judge)."""
    sources = sorted((ROOT / "effectbench").rglob("*.py")) + sorted(
        (ROOT / "verifier").rglob("*.py")
    )
    found = [
        f"{path.relative_to(ROOT)}:{line} takes {name} from the facade"
        for path in sources
        if path != ROOT / "effectbench" / "__init__.py"
        for line, name in facade_names(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_facade_check_sees_a_name_and_passes_a_submodule() -> None:
    assert facade_names("from effectbench import SPEC_VERSION, cli") == [(1, "SPEC_VERSION")]


def test_the_verdict_rule_lives_in_the_judge() -> None:
    """Re-reading an unreadable record is a judge rule: the orchestration imports it from there
    and no module defines another."""
    defined = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "effectbench").rglob("*.py"))
        if "def read_verdict(" in path.read_text(encoding="utf-8")
    ]
    assert defined == ["effectbench/judge.py"]


def test_no_generate_helper_in_the_engine() -> None:
    """What ``make generate`` writes is assembled in ``scripts/generate.py``: the engine's
    modules (imported by lower floors, as ``reachability`` is by the kit) hold no helper that
    reaches back up to the installed packs to publish their documents."""
    assert "pack_documents" not in (ROOT / "effectbench" / "reachability.py").read_text()
    assert "def pack_documents(" in (ROOT / "scripts" / "generate.py").read_text()


def _docstrings(tree: ast.AST) -> set[int]:
    """Return the ids of ``tree``'s docstring nodes (a module's, class's or function's first
    statement, and a string standing alone after an assignment: an attribute's docstring)."""
    ids = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                ids.add(id(stmt.value))
    return ids


def pack_names_in(source: str, names: Iterable[str]) -> list[tuple[int, str]]:
    """Return (line, name) of every pack name that a string of ``source`` holds as a word (its
    docstrings and comments aside: an example in prose names no pack the code depends on)."""
    tree = ast.parse(source)
    prose = _docstrings(tree)
    longest_first = sorted(names, key=len, reverse=True)
    words = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, longest_first)) + r")(?!\w)")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            found += [(node.lineno, m.group(1)) for m in words.finditer(node.value)]
    return sorted(found)


def test_the_engine_names_no_pack() -> None:
    """Only ``effectbench/packs/`` knows the built-in packs by name: defaults, the reference set
    and help texts read the installed packs (:mod:`effectbench.packs`)."""
    from effectbench.packs import pack_names

    names = pack_names()
    assert {"clinic", "mockmed"} <= set(names)
    found = []
    for path in sorted((ROOT / "effectbench").rglob("*.py")) + sorted(
        (ROOT / "verifier").rglob("*.py")
    ):
        if (ROOT / "effectbench" / "packs") in path.parents:
            continue
        for line, name in pack_names_in(path.read_text(encoding="utf-8"), names):
            found.append(f"{path.relative_to(ROOT)}:{line} names pack {name!r}")
    assert found == []


def test_the_pack_name_check_sees_code_and_not_prose() -> None:
    source = '"""Run clinic."""\nX = "clinic"\n"""X: the clinic pack."""\nY = f"{a}-clinic-web"\n'
    source += 'Z = "clinical-billing"\nW = "ticketing-generated"\n'
    assert pack_names_in(source, ["clinic", "ticketing-generated"]) == [
        (2, "clinic"),
        (4, "clinic"),
        (6, "ticketing-generated"),
    ]
