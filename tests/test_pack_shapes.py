"""The two shipped packs share no code of the same shape: what they have alike is the kit's.

The clinic (``effectbench/packs/clinic``) and the ticketing pack (``packs/ticketing``) are
built on the pack kit (``effectbench.kit``, re-exported by ``effectbench.api``); each keeps
only its domain. This test holds them to it: every source line of both is tokenised
(:mod:`tokenize`) into its *shape* (each identifier one token, each literal another, keywords
and operators kept as they are), and no run of :data:`RUN` consecutive code lines of one
pack has the shape of a run of the other. Lines of literals and punctuation alone are data
(a seed row, a mechanism's sentence), not code, and are left out; so are the files that are
nothing but the domain's own tables and templates (:data:`EXEMPT`).
"""

from __future__ import annotations

import io
import keyword
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKS = (ROOT / "effectbench" / "packs" / "clinic", ROOT / "packs" / "ticketing")
RUN = 13
"""The shortest shared run of lines that counts as code written twice."""
EXEMPT = {
    "tasks.py": "the task tables (each task's definition: target, fault, payload)",
    "web/app.py": "the page templates (each page's HTML)",
}
"""Files (relative to a pack's package folder) that hold only the domain's tables/templates."""

_SKIP = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def shapes(source: str) -> list[tuple[int, str]]:
    """Return ``(line, shape)`` for every line of ``source`` that holds code, in order.

    An f-string is one literal on every Python (3.12 tokenises its parts separately).
    """
    words: dict[int, list[str]] = {}
    depth = 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if _FSTRING_START is not None and tok.type == _FSTRING_START:
            if depth == 0:
                words.setdefault(tok.start[0], []).append("L")
            depth += 1
            continue
        if depth:
            depth -= tok.type == _FSTRING_END
            continue
        if tok.type in _SKIP:
            continue
        if tok.type == tokenize.NAME:
            word = tok.string if keyword.iskeyword(tok.string) else "N"
        elif tok.type in (tokenize.STRING, tokenize.NUMBER):
            word = "L"
        else:
            word = tok.string
        words.setdefault(tok.start[0], []).append(word)
    return [
        (line, " ".join(w))
        for line, w in sorted(words.items())
        if any(x == "N" or keyword.iskeyword(x) for x in w)
    ]


def sources(pack: Path) -> Iterator[tuple[str, str]]:
    """Yield ``(relative path, text)`` of every module of ``pack`` but the exempt ones."""
    package = next(p for p in (pack, *pack.iterdir()) if (p / "__init__.py").is_file())
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if relative not in EXEMPT:
            yield path.relative_to(pack.parent).as_posix(), path.read_text(encoding="utf-8")


def windows(lines: list[tuple[int, str]], run: int) -> Iterator[tuple[tuple[str, ...], int]]:
    """Yield every run of ``run`` consecutive shapes, with the line it starts on."""
    for i in range(len(lines) - run + 1):
        yield tuple(s for _, s in lines[i : i + run]), lines[i][0]


def shared_runs(first: Path, second: Path, run: int = RUN) -> list[str]:
    """Return one line per stretch of ``first`` in which every ``run`` consecutive lines have
    the shape of ``run`` lines of ``second`` (``path:line ~ path:line``, where each starts)."""
    theirs: dict[tuple[str, ...], str] = {}
    for name, text in sources(second):
        for shape, line in windows(shapes(text), run):
            theirs.setdefault(shape, f"{name}:{line}")
    found = []
    for name, text in sources(first):
        inside = False  # a window overlapping the last one reported is the same stretch
        for shape, line in windows(shapes(text), run):
            if shape in theirs and not inside:
                found.append(f"{name}:{line} ~ {theirs[shape]}")
            inside = shape in theirs
    return found


def test_the_clinic_and_the_ticketing_pack_share_no_code_of_the_same_shape() -> None:
    clinic, ticketing = PACKS
    assert len(list(sources(clinic))) > 10 and len(list(sources(ticketing))) > 10
    assert shared_runs(clinic, ticketing) == []


def test_the_check_finds_a_run_written_twice_with_other_names(tmp_path: Path) -> None:
    body = "".join(f"    total_{i} = compute(value_{i}, {i})\n" for i in range(RUN))
    for name, word in (("one", "alpha"), ("two", "beta")):
        package = tmp_path / name / f"{word}_pack"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text('"""A pack."""\n')
        renamed = body.replace("total", word).replace("compute", f"{word}_sum")
        (package / "store.py").write_text(f"def run() -> None:\n{renamed}")
    assert shared_runs(tmp_path / "one", tmp_path / "two") == [
        "one/alpha_pack/store.py:1 ~ two/beta_pack/store.py:1"
    ]
    shorter = body.splitlines(keepends=True)[: RUN - 2]  # with the def line: RUN - 1 lines
    (tmp_path / "two" / "beta_pack" / "store.py").write_text(
        "def run() -> None:\n" + "".join(shorter)
    )
    assert shared_runs(tmp_path / "one", tmp_path / "two") == []
