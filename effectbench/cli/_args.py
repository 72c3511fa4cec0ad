"""What every command module shares: the parser class, argument types and help.

Kept light on purpose: building the parser (``--help``, ``--version``) imports
this module and the command modules only, never pandas, pydantic or sigstore.
Help text that names things only a heavy import knows (the packs, their
baselines, the splits) is written with a ``{token}`` that :class:`HelpFormatter`
fills in when help is actually printed (:data:`LAZY_HELP`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any, NoReturn


def positive_int(text: str) -> int:
    """Parse a count of at least 1 for argparse (a one-line error otherwise)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def port_number(text: str) -> int:
    """Parse a TCP port (0 asks the system for a free one)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, got {value}")
    return value


def split_name(text: str) -> str:
    """Parse a split name (``dev`` or ``test``), checked against the SPEC's splits."""
    from effectbench.schema import Split

    return _one_of("split", text, [s.value for s in Split])


def _one_of(kind: str, text: str, names: Sequence[str]) -> str:
    if text not in names:
        raise argparse.ArgumentTypeError(f"unknown {kind} {text!r}; known: {', '.join(names)}")
    return text


def executor_name(text: str) -> str:
    """Parse where episodes run (``local``, ``dask``), checked against the executors."""
    from effectbench.run.executors import EXECUTORS

    return _one_of("executor", text, EXECUTORS)


def progress_mode(text: str) -> str:
    """Parse a progress mode (``auto``, ``bar``, ``lines``, ``off``)."""
    from effectbench.run.executors.progress import MODES

    return _one_of("progress mode", text, MODES)


def print_json(data: object) -> None:
    """Print ``data`` as indented JSON on stdout."""
    print(json.dumps(data, indent=2))


ANCHOR_PACK = "<anchor>"
"""``--pack``'s default where a command runs the regression anchor (never a pack's name: an
entry point's name cannot hold ``<``)."""
FIRST_PACK = "<first>"
"""``--pack``'s default where an agent's door serves a pack: the first system of record's."""


def pack_arg(text: str) -> str:
    """Parse ``--pack``: a name as given, or a default resolved from the installed packs
    (:func:`effectbench.packs.anchor_pack`, :func:`effectbench.packs.first_pack`) only when the
    option is left out, so engine code names no pack."""
    if text == ANCHOR_PACK:
        from effectbench.packs import anchor_pack

        return anchor_pack()
    if text == FIRST_PACK:
        from effectbench.packs import first_pack

        return first_pack()
    return text


def _packs() -> str:
    from effectbench.packs import pack_names

    return ", ".join(pack_names())


def _instance_packs() -> str:
    from effectbench.packs import instance_packs

    return ", ".join(instance_packs()) or "none installed"


def _baselines() -> str:
    from effectbench.baselines import baseline_names
    from effectbench.errors import UsageError
    from effectbench.packs import installed, pack_class

    names: dict[str, list[str]] = {}  # one entry per pack, aliases together
    for name, entry in installed().items():
        names.setdefault(entry.target, []).append(name)
    shown = []
    for n in names.values():
        try:  # a broken plug-in is named, not fatal: effectbench packs says why
            arms = ", ".join(baseline_names(pack_class(n[0])))
        except UsageError:
            arms = "cannot be loaded (see effectbench packs)"
        shown.append(f"{' / '.join(n)}: {arms}")
    return "; ".join(shown)


def _splits() -> str:
    from effectbench.schema import Split

    return ", ".join(s.value for s in Split)


def _executors() -> str:
    from effectbench.run.executors import EXECUTORS

    return ", ".join(EXECUTORS)


def _progress_modes() -> str:
    from effectbench.run.executors.progress import MODES

    return ", ".join(MODES)


LAZY_HELP: dict[str, Callable[[], str]] = {
    "packs": _packs,
    "instance_packs": _instance_packs,
    "baselines": _baselines,
    "splits": _splits,
    "executors": _executors,
    "progress_modes": _progress_modes,
}
"""``{token}`` in a help text -> what it stands for (computed only when help is printed)."""


PACK_DEFAULTS = {
    ANCHOR_PACK: "the installed regression anchor",
    FIRST_PACK: "the first installed system of record's pack",
}
"""What each of ``--pack``'s resolved defaults is, in words."""


def shown_default(action: argparse.Action) -> str:
    """Return what an option's help says its default is: a ``--pack`` default resolved, with
    what it stands for; any other as it is."""
    from effectbench.errors import UsageError

    if isinstance(action.default, str) and action.default in PACK_DEFAULTS:
        try:
            name = pack_arg(action.default)
        except UsageError as exc:
            return str(exc)
        return f"{name}, {PACK_DEFAULTS[action.default]}"
    return str(action.default)


class HelpFormatter(argparse.HelpFormatter):
    """Fills in :data:`LAZY_HELP` tokens and shows each option's default after its help."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        for token, fill in LAZY_HELP.items():
            if "{" + token + "}" in text:
                text = text.replace("{" + token + "}", fill().replace("%", "%%"))
        shown = "%(default)" in text or "default:" in text
        has_default = action.default not in (None, False, argparse.SUPPRESS)
        if action.option_strings and has_default and not shown:
            text += f" (default: {shown_default(action).replace('%', '%%')})"
        return text

    def _split_lines(self, text: str, width: int) -> list[str]:
        """Wrap at spaces only: a pack's name (``clinic-generated``) is never cut at its hyphen."""
        import re
        import textwrap

        return textwrap.wrap(re.sub(r"\s+", " ", text).strip(), width, break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (and ``--help`` for the rest)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Print ``prog: error: message`` on one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def add_bundle_paths(parser: argparse.ArgumentParser) -> None:
    """Add the positional ``PATH...`` of the commands that read bundles (verify, rank)."""
    from pathlib import Path

    parser.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="a bundle folder, an upstream document, or a folder of bundles",
    )


RECORDS_DEFAULT = "reproductions"
"""The folder of reproduction records (beside ``submissions/`` in the repository)."""


def add_record_options(parser: argparse.ArgumentParser, *, force: bool = True) -> None:
    """Add where reproduction records are read and whose count (verify, rank, site build,
    reproduce); with ``force``, ``--reproduce`` too."""
    parser.add_argument(
        "--records",
        default=RECORDS_DEFAULT,
        metavar="DIR",
        help="the folder of reproduction records: the listed references' (maintainers') and "
        "the signed ones (default: %(default)s); this machine's own records are read too",
    )
    parser.add_argument(
        "--record-signer",
        nargs=2,
        action="append",
        default=[],
        metavar=("IDENTITY", "ISSUER"),
        help="also accept reproduction records signed by IDENTITY under OIDC issuer ISSUER "
        "(repeatable; beside verifier/record_signers.json)",
    )
    parser.add_argument(
        "--record-trust-config",
        metavar="FILE",
        help="check record signatures against this Sigstore trust configuration (a private "
        "instance, e.g. the tests'); default: --trust-config, else the pinned root",
    )
    if force:
        parser.add_argument(
            "--reproduce",
            action="store_true",
            help="re-run every shipped-baseline bundle, even one with a valid reproduction record",
        )


def record_policy(args: argparse.Namespace) -> Any:
    """The :class:`verifier.records.RecordPolicy` of the options :func:`add_record_options`
    added (imported here: the verifier is heavy)."""
    from pathlib import Path

    from verifier.records import RecordPolicy

    trust = args.record_trust_config or getattr(args, "trust_config", None)
    return RecordPolicy(
        records=Path(args.records),
        signers=tuple((identity, issuer) for identity, issuer in args.record_signer),
        trust_config=Path(trust) if trust else None,
        local=True,
    )


def add_accepted(parser: argparse.ArgumentParser) -> None:
    """Add ``--accepted FILE``: the accepted-packs list to hold bundles to (verify, site)."""
    from pathlib import Path

    parser.add_argument(
        "--accepted",
        type=Path,
        metavar="FILE",
        help="the accepted packs (of other distributions) to hold bundles to, for a local board "
        "(default: the verifier's own list, $EFFECTBENCH_ACCEPTED_PACKS)",
    )


def use_accepted(path: Any) -> None:
    """Hold this run's bundles to the list at ``path`` (None: the default); a file that is no
    list is a one-line error. It is set in the environment, for worker processes too."""
    import os

    from effectbench.errors import UsageError
    from verifier.accepted import ACCEPTED_ENV, load_accepted

    if path is None:
        return
    try:
        load_accepted(path)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise UsageError(f"--accepted {path}: not a list of accepted packs ({exc})") from None
    os.environ[ACCEPTED_ENV] = str(path.resolve())
