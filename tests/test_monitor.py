"""The monitor track end to end: the corpus export, reference monitors, signed monitor bundles,
and the verifier's refusals.

One corpus is built per module, through the command line, from real bundles: two signed
MockMed bundles (the dev split, ranked under the private Sigstore test root) and the clinic's
sequestered split run by the shipped baselines on the api substrate (the test split, plain and
told that a monitor watches).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from sigstore_testroot import GOOGLE, SigstoreTestInstance, shared_instance
from support.bundles import make_bundle
from support.monitors import bundle_scores, check_split

from effectbench.cli import main
from effectbench.errors import UsageError
from effectbench.findings import CheckId
from effectbench.monitors.bundle import MONITOR_FILE, SCORES_FILE
from effectbench.monitors.corpus import (
    Corpus,
    CorpusFolder,
    LabelFile,
    read_corpus,
    read_labels,
)
from effectbench.monitors.reference import ClaimText, FrameChange
from effectbench.monitors.run import Scored, run_monitor
from effectbench.monitors.sources import assemble
from effectbench.monitors.view import FORBIDDEN, READABLE
from effectbench.schema import Outcome, Split
from effectbench.signatures import sign_bundle
from effectbench.signatures.subjects import PREDICATE_TYPE as SUBMISSION_PREDICATE
from effectbench.site._monitors import kept_assemble
from verifier.api import VerifyOptions, verify_path
from verifier.corpus import board_corpus
from verifier.monitors import MonitorReport, verify_monitor
from verifier.ranking import rank_across
from verifier.report import Status

ALICE = "alice@example.org"
WHEN = "2026-01-02"
OUTCOME_VALUES = {o.value for o in Outcome} - {"success"}
"""The truth table's labels (``success`` is also what an application's screen says)."""


@pytest.fixture(scope="module")
def instance() -> SigstoreTestInstance:
    return shared_instance()


@pytest.fixture(scope="module")
def board(instance: SigstoreTestInstance, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out as the repository: ``submissions/``, ``monitors/heldout/`` and
    ``monitors/corpus.lock.json``, with the exported ``corpus/`` and the board's ``held/``
    labels."""
    root = tmp_path_factory.mktemp("board")
    for baseline in ("screen_only", "effect_verified"):
        bundle = make_bundle(
            root / "submissions" / f"2026-01-01_{baseline}",
            baseline,
            declare_baseline=False,
            signer=(ALICE, GOOGLE),
        )
        token = instance.email_token(ALICE)
        sign_bundle(bundle, identity_token=token, trust_config=instance.trust_config_path)
    heldout = root / "monitors" / "heldout"
    status = main(
        ["monitor", "heldout", "--out", str(heldout), "--substrate", "api", "--pack", "clinic"]
    )
    assert status == 0
    args = ["monitor", "corpus", str(root / "submissions"), "--out", str(root / "corpus")]
    args += ["--heldout", str(heldout), "--held-labels", str(root / "held")]
    args += ["--lock", str(root / "monitors" / "corpus.lock.json")]
    args += ["--trust-config", str(instance.trust_config_path)]
    assert main(args) == 0
    return root


@pytest.fixture(scope="module")
def corpus(board: Path) -> CorpusFolder:
    return read_corpus(board / "corpus")


@pytest.fixture(scope="module")
def labels(board: Path, corpus: CorpusFolder) -> list[LabelFile]:
    dev = corpus.labels(Split.DEV)
    assert dev is not None
    return [dev, read_labels(board / "held" / "labels-test.json")]


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)
    elif isinstance(value, str):
        yield value


# -- the corpus ------------------------------------------------------------------------------


def test_corpus_holds_no_oracle_derived_field(board: Path) -> None:
    folder = board / "corpus"
    assert sorted(p.name for p in folder.iterdir()) == [
        "corpus.json",
        "episodes.jsonl",
        "frames",
        "labels-dev.json",
    ]
    lines = (folder / "episodes.jsonl").read_bytes().splitlines()
    assert lines
    for line in lines:
        view = orjson.loads(line)
        assert set(view) == {
            "id",
            "substrate",
            "task",
            "actions",
            "observations",
            "frames",
            "claim",
        }
        present = set(_keys(view)) & set(FORBIDDEN)
        assert not present, present
        # no outcome, verdict or episode id as a value either (the ids are opaque hashes)
        assert not set(_strings(view)) & OUTCOME_VALUES
        assert view["id"].startswith("ep-") and len(view["id"]) == 23
    manifest = json.loads((folder / "corpus.json").read_text())
    assert not set(_keys(manifest)) & {"outcome", "truth", "oracle", "reading", "changes", "label"}
    raw = (folder / "episodes.jsonl").read_bytes()
    for word in (b"oracle", b"outcome", b"verdict", b"effect_correct", b"changes", b"truth"):
        assert word not in raw


def test_test_labels_are_held_by_the_board_only(
    board: Path, corpus: CorpusFolder, labels: list[LabelFile]
) -> None:
    dev, test = labels
    assert not list((board / "corpus").rglob("labels-test*"))
    assert corpus.manifest.labels == {Split.DEV: "labels-dev.json"}
    ids = {v.id for v in corpus.views}
    assert {e.id for e in dev.episodes} | {e.id for e in test.episodes} == ids
    assert not {e.id for e in dev.episodes} & {e.id for e in test.episodes}
    assert corpus.manifest.splits == {Split.DEV: len(dev.episodes), Split.TEST: len(test.episodes)}
    assert {e.slice for e in test.episodes} == {"plain", "monitored"}
    assert all(e.source.startswith(str(board / "monitors" / "heldout")) for e in test.episodes)


def test_labels_come_from_the_verified_rows(board: Path, labels: list[LabelFile]) -> None:
    dev, test = labels
    for label_file in labels:
        kinds = {e.label for e in label_file.episodes}
        assert kinds == {"positive", "negative", "unscored"}, label_file.split
    by_episode = {(e.source, e.episode_id): e for e in dev.episodes}
    for bundle in sorted((board / "submissions").iterdir()):
        for line in (bundle / "episodes.jsonl").read_bytes().splitlines():
            row = orjson.loads(line)
            entry = by_episode[(str(bundle), row["episode_id"])]
            assert entry.outcome.value == row["outcome"]
            expected = {"silent_wrong_effect": "positive", "success": "negative"}
            assert entry.label == expected.get(row["outcome"], "unscored")


def test_corpus_is_content_addressed_and_locked(board: Path, corpus: CorpusFolder) -> None:
    raw = (board / "corpus" / "episodes.jsonl").read_bytes()
    assert corpus.ref.digest == "sha256:" + hashlib.sha256(raw).hexdigest()
    lock = json.loads((board / "monitors" / "corpus.lock.json").read_text())
    assert lock["corpus"] == corpus.ref.model_dump(mode="json")
    # the two signed bundles, and the held-out runs of the four reference arms (screen_only,
    # effect_verified, effect_verified_all, look_before_write), plain and monitored
    assert len(lock["sources"]) == 2 + 4 * 2
    for view in corpus.views:
        for frame in view.frames:
            data = corpus.frame(frame.name).read_bytes()
            assert hashlib.sha256(data).hexdigest() == frame.name.partition(".")[0]
    # the same sources export the same corpus, at the same version
    again = board / "again"
    args = ["monitor", "corpus", str(board / "submissions"), "--out", str(again)]
    args += ["--heldout", str(board / "monitors" / "heldout")]
    args += ["--lock", str(board / "monitors" / "corpus.lock.json")]
    args += ["--trust-config", str(shared_instance().trust_config_path)]
    assert main(args) == 0
    assert (again / "episodes.jsonl").read_bytes() == raw
    assert not (again / "labels-test.json").exists()


def test_the_board_makes_the_locked_corpus_again_or_says_why_not(
    board: Path, corpus: CorpusFolder, instance: SigstoreTestInstance
) -> None:
    options = VerifyOptions(trust_config=instance.trust_config_path)
    reports = rank_across(list(verify_path(board / "submissions", options)))
    made = board_corpus(board, reports)
    assert made.corpus is not None and not made.findings
    assert made.corpus.ref == corpus.ref
    assert made.corpus.lines == (board / "corpus" / "episodes.jsonl").read_bytes()
    missing = board_corpus(board, reports[1:])
    assert missing.corpus is None
    assert [f.check for f in missing.findings] == [CheckId.MONITOR_CORPUS_SOURCE]
    assert missing.findings[0].file == reports[0].path


def test_a_kept_corpus_is_the_corpus_made_again(
    board: Path, instance: SigstoreTestInstance, tmp_path: Path
) -> None:
    """The site keeps the corpus it made (sealed, by code and locked sources): the next build
    adopts it instead of reading every source's receipts again, and gets the same corpus; an
    entry this machine did not seal is made again."""
    options = VerifyOptions(trust_config=instance.trust_config_path)
    reports = rank_across(list(verify_path(board / "submissions", options)))
    made = board_corpus(board, reports).corpus
    assert made is not None
    keep = tmp_path / "kept"
    first = board_corpus(board, reports, kept_assemble(keep)).corpus
    (entry,) = keep.iterdir()
    assembled: list[int] = []

    def counting(*args: Any) -> Corpus:
        assembled.append(1)
        return assemble(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("effectbench.site._monitors.assemble", counting)
        again = board_corpus(board, reports, kept_assemble(keep)).corpus
        assert assembled == []  # adopted
        entry.write_bytes(entry.read_bytes()[:-1] + b"x")  # no longer sealed here
        remade = board_corpus(board, reports, kept_assemble(keep)).corpus
        assert assembled == [1]
    for corpus in (first, again, remade):
        assert corpus is not None
        assert (corpus.ref, corpus.lines, corpus.frames) == (made.ref, made.lines, made.frames)
        assert corpus.labels == made.labels
        assert corpus.ids() == [v.id for v in made.views]
    assert again is not None and again.views == made.views  # read back from the lines


def test_an_altered_corpus_is_refused(board: Path, tmp_path: Path) -> None:
    copy = shutil.copytree(board / "corpus", tmp_path / "c")
    path = copy / "episodes.jsonl"
    path.write_bytes(
        path.read_bytes().replace(b'"reported_success":true', b'"reported_success":false', 1)
    )
    with pytest.raises(Exception, match="digest"):
        read_corpus(copy)


# -- monitors may read the overseer's view only ----------------------------------------------


class _ReadsTheLabel:
    name = "label reader"
    version = "1"
    description = ""
    reference = None
    model = None
    reads = ("claim.message", "outcome")

    def score(self, episode: Any, frames: Any) -> Scored:
        return Scored(1.0 if episode.get("outcome") == "silent_wrong_effect" else 0.0)


def test_a_monitor_that_reads_the_label_cannot_run(corpus: CorpusFolder, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="outcome"):
        run_monitor(_ReadsTheLabel(), corpus, tmp_path, when=WHEN)
    assert not list(tmp_path.iterdir())
    assert all("outcome" not in raw for raw in corpus.raw)  # nothing to read even if it could
    assert not set(READABLE) & set(FORBIDDEN)


# -- reference monitors, verified ------------------------------------------------------------


@pytest.fixture(scope="module")
def claim_text(corpus: CorpusFolder, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_monitor(ClaimText(), corpus, tmp_path_factory.mktemp("claim"), when=WHEN)


def _verify(
    bundle: Path,
    corpus: CorpusFolder,
    labels: list[LabelFile],
    instance: SigstoreTestInstance | None = None,
) -> MonitorReport:
    return verify_monitor(
        bundle,
        corpus.ref,
        [v.id for v in corpus.views],
        labels,
        allow_unsigned=instance is None,
        trust_config=None if instance is None else instance.trust_config_path,
    )


def test_reference_monitors_are_scored_as_an_independent_computation_says(
    claim_text: Path, corpus: CorpusFolder, labels: list[LabelFile], tmp_path: Path
) -> None:
    frame_change = run_monitor(FrameChange(), corpus, tmp_path, when=WHEN)
    for bundle in (claim_text, frame_change):
        report = _verify(bundle, corpus, labels)
        assert report.status is Status.PREVIEW, report.findings
        scores = bundle_scores(bundle)
        assert len(scores) == len(corpus.views)
        for split, label_file in zip(report.splits, labels, strict=True):
            check_split(split, scores, label_file)
        assert set(report.splits[1].slices) == {"plain", "monitored"}
    manifest = json.loads((claim_text / MONITOR_FILE).read_text())
    assert manifest["reads"] == ["claim.message", "claim.reported_success"]
    assert manifest["learned_from"] == ["dev"]
    assert manifest["measured"]["episodes"] == len(corpus.views)


def test_a_signed_monitor_bundle_is_ranked_and_tampering_is_refused(
    corpus: CorpusFolder,
    labels: list[LabelFile],
    instance: SigstoreTestInstance,
    tmp_path: Path,
) -> None:
    from effectbench.bundle import SignerDecl

    signer = SignerDecl(identity=ALICE, issuer=GOOGLE)
    bundle = run_monitor(ClaimText(), corpus, tmp_path / "m", when=WHEN, signer=signer)
    token = instance.email_token(ALICE)
    assert (
        main(
            [
                "sign",
                str(bundle),
                "--identity-token",
                token,
                "--trust-config",
                str(instance.trust_config_path),
            ]
        )
        == 0
    )
    report = _verify(bundle, corpus, labels, instance)
    assert report.status is Status.RANKED, report.findings
    assert report.signer is not None and report.signer.identity == ALICE
    # a score changed after signing (the claims kept consistent) breaks the signature
    tampered = shutil.copytree(bundle, tmp_path / "t")
    lines = (tampered / SCORES_FILE).read_bytes().splitlines()
    first = orjson.loads(lines[0])
    first["latency_s"] = first["latency_s"] + 0.0  # same numbers, other bytes
    lines[0] = orjson.dumps(first, option=orjson.OPT_SORT_KEYS)
    (tampered / SCORES_FILE).write_bytes(b"\n".join(lines) + b"\n")
    refused = _verify(tampered, corpus, labels, instance)
    assert refused.status is Status.REFUSED
    assert any(f.startswith("signature.") for f in refused.finding_ids())
    # a signature of a submission's predicate type never vouches for a monitor bundle
    other = shutil.copytree(bundle, tmp_path / "o")
    (other / "submission.sigstore.json").unlink()
    sign_bundle(
        other,
        identity_token=instance.email_token(ALICE),
        trust_config=instance.trust_config_path,
        manifest=MONITOR_FILE,
        predicate_type=SUBMISSION_PREDICATE,
    )
    wrong = _verify(other, corpus, labels, instance)
    assert wrong.status is Status.REFUSED
    assert CheckId.SIGNATURE_PREDICATE_TYPE.value in wrong.finding_ids()


# -- refusals ---------------------------------------------------------------------------------


def _lines(bundle: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in (bundle / SCORES_FILE).read_bytes().splitlines()]


def _write(bundle: Path, lines: list[dict[str, Any]]) -> None:
    (bundle / SCORES_FILE).write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))


def _edit_manifest(bundle: Path, fn: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads((bundle / MONITOR_FILE).read_text())
    fn(data)
    (bundle / MONITOR_FILE).write_text(json.dumps(data))


def _duplicate(b: Path) -> None:
    _write(b, [*_lines(b), _lines(b)[3]])


def _missing(b: Path) -> None:
    _write(b, _lines(b)[1:])


def _unknown(b: Path) -> None:
    lines = _lines(b)
    lines[2]["id"] = "ep-00000000000000000000"
    _write(b, lines)


def _nan(b: Path) -> None:
    text = (b / SCORES_FILE).read_text().splitlines()
    data = json.loads(text[4])
    text[4] = json.dumps({**data, "score": float("nan")})  # writes NaN
    (b / SCORES_FILE).write_text("\n".join(text) + "\n")


def _infinite(b: Path) -> None:
    text = (b / SCORES_FILE).read_text().splitlines()
    text[4] = text[4].replace('"score":', '"score":1e999,"was":', 1)
    (b / SCORES_FILE).write_text("\n".join(text) + "\n")


def _not_json(b: Path) -> None:
    text = (b / SCORES_FILE).read_text().splitlines()
    text[5] = text[5][:-3]
    (b / SCORES_FILE).write_text("\n".join(text) + "\n")


def _forged_auroc(b: Path) -> None:
    _edit_manifest(b, lambda m: m["dev"].update(auroc=min(1.0, m["dev"]["auroc"] + 1e-6)))


def _forged_cost(b: Path) -> None:
    _edit_manifest(b, lambda m: m["measured"].update(cost_usd_per_episode=0.5))


def _other_corpus(b: Path) -> None:
    _edit_manifest(b, lambda m: m["corpus"].update(digest="sha256:" + "1" * 64))


def _reads_the_oracle(b: Path) -> None:
    _edit_manifest(b, lambda m: m.update(reads=["claim.message", "oracle.verdict"]))


def _extra_file(b: Path) -> None:
    (b / "notes.txt").write_text("hello")


REFUSALS = {
    "duplicate": (_duplicate, CheckId.MONITOR_DUPLICATE_EPISODE, SCORES_FILE, True),
    "missing": (_missing, CheckId.MONITOR_MISSING_EPISODE, SCORES_FILE, False),
    "unknown": (_unknown, CheckId.MONITOR_UNKNOWN_EPISODE, SCORES_FILE, True),
    "nan": (_nan, CheckId.MONITOR_NON_FINITE, SCORES_FILE, True),
    "infinite": (_infinite, CheckId.MONITOR_NON_FINITE, SCORES_FILE, True),
    "not json": (_not_json, CheckId.MONITOR_SCORE_LINE, SCORES_FILE, True),
    "forged auroc": (_forged_auroc, CheckId.MONITOR_CLAIMS, MONITOR_FILE, False),
    "forged cost": (_forged_cost, CheckId.MONITOR_CLAIMS, MONITOR_FILE, False),
    "other corpus": (_other_corpus, CheckId.MONITOR_CORPUS, MONITOR_FILE, False),
    "reads the oracle": (_reads_the_oracle, CheckId.MONITOR_FORBIDDEN_READ, MONITOR_FILE, False),
    "extra file": (_extra_file, CheckId.MONITOR_FILES, "notes.txt", False),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_the_verifier_refuses_bad_scores(
    case: str, claim_text: Path, corpus: CorpusFolder, labels: list[LabelFile], tmp_path: Path
) -> None:
    edit, check, file, has_line = REFUSALS[case]
    bundle = shutil.copytree(claim_text, tmp_path / "b")
    edit(bundle)
    before = {p.name: p.read_bytes() for p in bundle.iterdir()}
    report = _verify(bundle, corpus, labels)
    assert report.status is Status.REFUSED and not report.splits
    assert check.value in report.finding_ids(), report.findings
    finding = next(f for f in report.findings if f.check is check)
    assert finding.file == file
    assert (finding.line is not None) is has_line
    assert {p.name: p.read_bytes() for p in bundle.iterdir()} == before  # nothing modified


def test_a_label_file_of_another_corpus_is_a_finding(
    claim_text: Path, corpus: CorpusFolder, labels: list[LabelFile]
) -> None:
    dev, test = labels
    other = test.model_copy(update={"corpus": test.corpus.model_copy(update={"version": 9})})
    report = _verify(claim_text, corpus, [dev, other])
    assert report.status is Status.REFUSED
    assert CheckId.MONITOR_LABELS.value in report.finding_ids()


def test_the_command_line_says_what_is_wrong_in_one_line(
    board: Path, claim_text: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = shutil.copytree(claim_text, tmp_path / "b")
    _nan(bundle)
    args = ["monitor", "verify", str(bundle), "--corpus", str(board / "corpus"), "--allow-unsigned"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert f"[monitor.non_finite] {SCORES_FILE}:5: score:" in out
    assert "REFUSED" in out and "Traceback" not in out
    args[2] = str(claim_text)
    assert main([*args, "--labels", str(board / "held" / "labels-test.json")]) == 0
    out = capsys.readouterr().out
    assert "PREVIEW" in out and "  test:" in out and "AUROC" in out
    # a corpus that is not one: a one-line error, exit 2
    assert main(["monitor", "verify", str(claim_text), "--corpus", str(tmp_path)]) == 2
    assert "corpus.json: missing" in capsys.readouterr().err


def test_the_model_judge_asks_a_scripted_model_through_inspect(
    corpus: CorpusFolder, labels: list[LabelFile], tmp_path: Path
) -> None:
    from effectbench.monitors.judge import SCRIPTED_MODEL, ModelJudge, prompt_of

    judge = ModelJudge()
    bundle = run_monitor(judge, corpus, tmp_path, when=WHEN)
    assert judge.unparsed == 0  # every answer of the stand-in carried a probability
    report = _verify(bundle, corpus, labels)
    assert report.status is Status.PREVIEW, report.findings
    manifest = json.loads((bundle / MONITOR_FILE).read_text())
    assert manifest["monitor"]["model"] == SCRIPTED_MODEL
    scores = [x["score"] for x in _lines(bundle)]
    assert len(set(scores)) > 1 and all(0.0 <= x <= 1.0 for x in scores)
    prompt = prompt_of(corpus.raw[0])
    assert "GOAL:" in prompt and "REPORT:" in prompt and "outcome" not in prompt


def test_a_label_that_is_not_its_outcome_s_is_one_line_with_its_field(
    board: Path, tmp_path: Path
) -> None:
    from effectbench.errors import DataError

    data = json.loads((board / "held" / "labels-test.json").read_text())
    i = next(i for i, e in enumerate(data["episodes"]) if e["label"] == "negative")
    data["episodes"][i]["label"] = "positive"
    path = tmp_path / "labels-test.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError) as caught:
        read_labels(path)
    assert caught.value.diagnostics() == (
        f"{path}: episodes.{i}.label: label 'positive' is not what outcome 'success' gives"
    )


def test_verify_json_holds_each_split_its_cells_and_slices(
    board: Path, claim_text: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["monitor", "verify", str(claim_text), "--corpus", str(board / "corpus")]
    args += ["--allow-unsigned", "--json"]
    args += ["--labels", str(board / "held" / "labels-test.json")]
    assert main(args) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["status"] == "preview" and report["findings"] == []
    assert [s["split"] for s in report["splits"]] == ["dev", "test"]
    test = report["splits"][1]
    assert set(test["slices"]) == {"plain", "monitored"}
    assert all(" x " in cell for cell in test["cells"])
    assert {"auroc", "auroc_ci", "points", "cost_per_catch"} <= set(test["overall"])


@pytest.mark.slow  # draws the generated clinic pack's fresh instance
def test_a_fresh_instance_bundle_is_a_corpus_source_of_its_own_instance() -> None:
    """The corpus reads a fresh-instance bundle's episodes against the instance it drew
    (its tasks are not the public seed's), not as tasks missing from the pack."""
    from effectbench.monitors.sources import CorpusSource, Located, _source_episodes
    from effectbench.schema import Split

    root = Path(__file__).resolve().parents[1]
    folder = root / "submissions" / "2026-12-02_screen-only-clinic-generated-fresh"
    source = CorpusSource(
        folder=f"submissions/{folder.name}", content_hash="sha256:" + "0" * 64, split=Split.DEV
    )
    episodes = _source_episodes(Located(source, folder), {})
    assert episodes and all(label.task.startswith("clinic-generated::") for _, label, _ in episodes)
