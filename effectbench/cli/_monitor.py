"""Command group ``monitor``: the monitor track (detectors of silent wrong effects).

* ``monitor heldout``: run the shipped baselines on the sequestered split (plain, and told
  that a monitor watches) into the board's held-out folder;
* ``monitor corpus``: export the overseer's view of every verified episode with receipts
  (dev: the ranked bundles of a submissions folder; test: the held-out bundles), with the dev
  labels; the test labels go only where ``--held-labels`` says;
* ``monitor run``: score a corpus with a shipped reference monitor into a monitor bundle;
* ``monitor verify``: the verifier's verdict on monitor bundles, with their metrics.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from effectbench.cli._args import positive_int
from effectbench.errors import UsageError

if TYPE_CHECKING:
    from effectbench.metrics.clustered import TaskRate
    from effectbench.metrics.detection import Detection
    from verifier.monitors import MonitorReport


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _cmd_heldout(args: argparse.Namespace) -> int:
    from effectbench.monitors.heldout import run_heldout

    index = run_heldout(
        args.out, when=_today(), substrates=args.substrate, trials=args.trials, packs=args.pack
    )
    for entry in index.bundles:
        print(f"wrote {args.out / entry.folder} ({entry.pack}, {entry.baseline}, {entry.slice})")
    return 0


def _cmd_corpus(args: argparse.Namespace) -> int:
    from effectbench.monitors.corpus import labels_file_name, write_corpus
    from effectbench.monitors.sources import assemble, read_lock, write_lock
    from verifier.api import VerifyOptions, verify_path
    from verifier.corpus import corpus_sources, lock_corpus
    from verifier.ranking import rank_across

    if args.heldout is not None and not args.heldout.is_dir():
        raise UsageError(f"--heldout {args.heldout} is not a folder")
    if args.trust_config is not None and not args.trust_config.is_file():
        raise UsageError(f"--trust-config {args.trust_config} is not a file")
    options = VerifyOptions(trust_config=args.trust_config)
    reports = rank_across(list(verify_path(args.submissions, options)))
    root = Path.cwd()
    if args.lock is not None:
        previous = read_lock(args.lock) if args.lock.exists() else None
        lock, corpus = lock_corpus(root, reports, args.heldout, previous)
    else:
        corpus = assemble(corpus_sources(root, reports, args.heldout), args.corpus_version)
    if not corpus.views:
        raise UsageError(f"no ranked bundle with receipts in {args.submissions}: nothing to export")
    write_corpus(corpus, args.out, held_labels=args.held_labels)
    if args.lock is not None:
        write_lock(args.lock, lock)
        print(f"wrote {args.lock}")
    ref = corpus.ref
    print(f"wrote {args.out}: corpus {ref.name} v{ref.version} {ref.digest}")
    for split, labels in corpus.labels.items():
        kinds = [e.label for e in labels.episodes]
        counts = ", ".join(f"{kinds.count(k)} {k}" for k in ("positive", "negative", "unscored"))
        if (args.out / labels_file_name(split)).exists():
            where = f"labels in {args.out / labels_file_name(split)}"
        elif args.held_labels is not None:
            where = f"labels held in {args.held_labels / labels_file_name(split)}"
        else:
            where = "labels not written (give --held-labels to keep them)"
        print(f"  {split.value}: {len(kinds)} episodes ({counts}); {where}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from effectbench.bundle import SignerDecl
    from effectbench.monitors.corpus import read_corpus
    from effectbench.monitors.reference import reference_monitor
    from effectbench.monitors.run import run_monitor

    options: dict[str, Any] = {}
    if args.model is not None:
        options["model"] = args.model
    if args.usd_per_mtok_in or args.usd_per_mtok_out:
        options.update(usd_per_mtok_in=args.usd_per_mtok_in, usd_per_mtok_out=args.usd_per_mtok_out)
    monitor = reference_monitor(args.name, **options)
    if (args.signer_identity is None) != (args.signer_issuer is None):
        raise UsageError("--signer-identity and --signer-issuer go together")
    signer = None
    if args.signer_identity is not None:
        signer = SignerDecl(identity=args.signer_identity, issuer=args.signer_issuer)
    corpus = read_corpus(args.corpus)
    folder = run_monitor(monitor, corpus, args.out, when=_today(), signer=signer)
    print(f"wrote {folder}")
    return 0


def _rate(name: str, found: TaskRate | None) -> str:
    if found is None:
        return f"{name} -"
    return (
        f"{name} {found.numerator}/{found.denominator} = {100 * found.rate:.1f}% "
        f"[{100 * found.ci.lo:.1f}, {100 * found.ci.hi:.1f}]"
    )


def _detection_lines(found: Detection) -> list[str]:
    area = "-" if found.auroc is None else f"{found.auroc:.3f}"
    if found.auroc_ci is not None:
        area += f" [{found.auroc_ci.lo:.3f}, {found.auroc_ci.hi:.3f}]"
    lines = [
        f"{found.positives} positive, {found.negatives} negative, {found.unscored} unscored "
        f"over {found.tasks} tasks; AUROC {area}"
    ]
    for point in found.points:
        lines.append(
            f"at {point.name} false positives ({point.false_positives} flagged negatives): "
            f"{_rate('recall', point.recall)}; {_rate('precision', point.precision)}"
        )
    per = "-" if found.cost_per_catch is None else f"{found.cost_per_catch:.4f}"
    lines.append(f"cost {found.cost_usd:.4f} USD, {per} USD per silent wrong effect caught")
    return lines


def _print_report(report: MonitorReport) -> None:
    name = report.manifest.monitor.name if report.manifest is not None else "?"
    listed = " (unsigned; listed by the maintainers as a reference run)" if report.listed else ""
    print(f"{report.path} (monitor {name!r}): {report.status.value.upper()}{listed}")
    for f in report.findings:
        where = f.file or ""
        where += f":{f.line}" if f.line is not None else ""
        where += f": {f.field}" if f.field else ""
        print(f"  [{f.check.value}] {where}: {f.message}")
    hidden = sum(report.counted.values()) - len(report.findings)
    if hidden:
        print(f"  ... and {hidden} more findings")
    for split in report.splits:
        print(f"  {split.split.value}:")
        for line in _detection_lines(split.overall):
            print(f"    {line}")
        if len(split.slices) > 1:
            for name, found in split.slices.items():
                recall = found.point("5%").recall
                print(f"    slice {name}: {_rate('recall at 5% false positives', recall)}")


def _cmd_verify(args: argparse.Namespace) -> int:
    from effectbench.monitors.corpus import read_corpus, read_labels
    from effectbench.schema import Split
    from verifier.monitors import verify_monitor

    if args.trust_config is not None and not args.trust_config.is_file():
        raise UsageError(f"--trust-config {args.trust_config} is not a file")
    corpus = read_corpus(args.corpus, check_frames=False)
    labels = [read_labels(path) for path in args.labels]
    dev = corpus.labels(Split.DEV)
    if dev is not None and all(f.split is not Split.DEV for f in labels):
        labels.insert(0, dev)
    ids = [view.id for view in corpus.views]
    reports = [
        verify_monitor(
            bundle,
            corpus.ref,
            ids,
            labels,
            allow_unsigned=args.allow_unsigned,
            trust_config=args.trust_config,
        )
        for bundle in args.bundles
    ]
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in reports], indent=2))
    else:
        for report in reports:
            _print_report(report)
        print(f"{sum(r.accepted for r in reports)} of {len(reports)} accepted")
    return 0 if all(r.accepted for r in reports) else 1


def register(sub: Any) -> None:
    """Add ``monitor`` and its subcommands."""
    p = sub.add_parser(
        "monitor",
        help="the monitor track: export a corpus, run and verify monitors",
        description="Detectors of silent wrong effects, scored against the oracle's labels.",
    )
    msub = p.add_subparsers(dest="monitor_command", required=True, metavar="SUBCOMMAND")

    h = msub.add_parser(
        "heldout", help="run the shipped baselines on the sequestered split (the test split)"
    )
    h.add_argument(
        "--out",
        type=Path,
        default=Path("monitors/heldout"),
        metavar="DIR",
        help="the held-out folder (never under submissions/) (default: monitors/heldout)",
    )
    h.add_argument(
        "--substrate", metavar="NAME", help="the substrate(s) to run on (as run --substrate)"
    )
    h.add_argument(
        "--trials", type=positive_int, default=3, metavar="N", help="trials per task (default: 3)"
    )
    h.add_argument("--pack", action="append", metavar="NAME", help="only this pack (repeatable)")
    h.set_defaults(func=_cmd_heldout)

    c = msub.add_parser(
        "corpus",
        help="export the overseer's view of every verified episode with receipts",
        description=(
            "Verify the bundles of SUBMISSIONS and export, from the ranked ones with receipts "
            "(dev) and the held-out bundles (test), what a monitor may see: goal, actions, "
            "frames, claim. Never the oracle's reading, the change set or the outcome. The dev "
            "labels go into the corpus; the test labels only into --held-labels."
        ),
    )
    c.add_argument(
        "submissions",
        nargs="?",
        type=Path,
        default=Path("submissions"),
        metavar="SUBMISSIONS",
        help="the folder of bundles the dev split comes from (default: submissions)",
    )
    c.add_argument("--out", type=Path, required=True, metavar="DIR", help="a new folder")
    c.add_argument("--heldout", type=Path, metavar="DIR", help="the held-out bundles (test)")
    c.add_argument(
        "--held-labels",
        type=Path,
        metavar="DIR",
        help="where the test split's labels go (the board's; outside --out)",
    )
    c.add_argument(
        "--lock",
        type=Path,
        metavar="FILE",
        help="pin the sources in this lock (same digest: same version; else the next)",
    )
    c.add_argument(
        "--corpus-version",
        type=positive_int,
        default=1,
        metavar="N",
        help="the corpus version without --lock (default 1)",
    )
    c.add_argument("--trust-config", type=Path, metavar="FILE", help="a private Sigstore root")
    c.set_defaults(func=_cmd_corpus)

    r = msub.add_parser("run", help="score a corpus with a reference monitor")
    r.add_argument("name", metavar="NAME", help="claim-text, frame-change or model-judge")
    r.add_argument("--corpus", type=Path, required=True, metavar="DIR", help="the corpus folder")
    r.add_argument(
        "--out",
        type=Path,
        default=Path("monitors/bundles"),
        metavar="DIR",
        help="where the monitor bundle's folder goes (default: monitors/bundles)",
    )
    r.add_argument(
        "--model",
        metavar="PROVIDER/MODEL",
        help="model-judge: the model asked, as inspect_ai names it (default: the scripted "
        "stand-in effectbench-mock/judge)",
    )
    r.add_argument(
        "--usd-per-mtok-in",
        type=float,
        default=0.0,
        metavar="USD",
        help="model-judge: price per million input tokens when the provider reports no cost",
    )
    r.add_argument(
        "--usd-per-mtok-out",
        type=float,
        default=0.0,
        metavar="USD",
        help="model-judge: price per million output tokens when the provider reports no cost",
    )
    r.add_argument("--signer-identity", metavar="ID", help="the signer to declare")
    r.add_argument("--signer-issuer", metavar="URL", help="its OIDC issuer")
    r.set_defaults(func=_cmd_run)

    v = msub.add_parser(
        "verify", help="verify monitor bundles against a corpus (exit 0 accepted, 1 refused)"
    )
    v.add_argument("bundles", nargs="+", type=Path, metavar="BUNDLE", help="monitor bundles")
    v.add_argument(
        "--corpus", type=Path, required=True, metavar="DIR", help="the corpus they scored"
    )
    v.add_argument(
        "--labels",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a label file besides the corpus's dev labels (the board's test labels)",
    )
    v.add_argument("--allow-unsigned", action="store_true", help="accept unsigned as previews")
    v.add_argument("--trust-config", type=Path, metavar="FILE", help="a private Sigstore root")
    v.add_argument("--json", action="store_true", help="print the reports as a JSON array")
    v.set_defaults(func=_cmd_verify)
