"""Receipts: every scored row's evidence, written by the harness, checked by the verifier.

Real runs (MockMed in-process, the clinic's API level over its SQLite service), real bundles
written by ``effectbench submit``, real verification. What must hold: a receipt per row; a
SWER episode's receipt names the field whose actual value differs from the expected one;
changing one value of a change set, swapping two receipts, a receipt of no row, a frame under
a path or not an image, a table the pack does not have, markup in a text: each refused with its
receipt check id, never a crash; the collateral-write rate; a resumed run keeps its receipts;
reproduction compares change sets. (Frames on real screens: tests/test_receipts_screens.py.)
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from support.bundles import (
    copy_bundle,
    edit_receipts,
    edit_rows,
    make_bundle,
    read_receipts,
    read_rows,
    read_submission,
    write_submission,
)

from effectbench.api import AllowedChange, Table, allowed_by_contract
from effectbench.baselines import get_baseline
from effectbench.changes import change_set, collateral
from effectbench.cli import main
from effectbench.effects import Effect, EffectKind
from effectbench.findings import CheckId, Family
from effectbench.kit.audit import attacks
from effectbench.kit.sqlite import attack_file
from effectbench.manifest import fingerprint
from effectbench.metrics import (
    COLLATERAL_COLUMN,
    DEFAULT_PRICES,
    episode_frame,
    task_rate,
    task_table,
)
from effectbench.packs import get_pack
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.audit import PLAN
from effectbench.packs.clinic.db import provision_copy
from effectbench.packs.clinic.oracle import SqliteOracle
from effectbench.packs.clinic.store import EDIT_FAULTS, MECHANISMS, SAVE_FAULTS
from effectbench.packs.mockmed import MockMedProvider
from effectbench.receipts.collect import evidence_of
from effectbench.receipts.model import Receipt
from effectbench.run.journal import retire_journal
from effectbench.run.runner import evaluate
from verifier.api import VerifyOptions, verify_bundle, verify_path
from verifier.frames import FrameBudget, pixel_problem, read_header
from verifier.limits import Limits
from verifier.pack import kept_pack_tasks, pack_tasks
from verifier.receipts import TASKS_KEPT, receipt_tasks

UNSIGNED = VerifyOptions(allow_unsigned=True, reproduce=False)


def _ids(bundle: Path, options: VerifyOptions = UNSIGNED) -> set[str]:
    return {str(i) for i in verify_bundle(bundle, options).finding_ids()}


def _submit(out: Path, *args: str) -> Path:
    before = set(out.iterdir()) if out.exists() else set()
    assert main(["submit", *args, "--out", str(out)]) == 0
    (new,) = set(out.iterdir()) - before
    return new


def _submit_mockmed(out: Path, baseline: str, *extra: str) -> Path:
    """``effectbench submit`` of a baseline on MockMed, 3 trials (with ``extra`` options)."""
    args = ("--pack", "mockmed", "--baseline", baseline, "--trials", "3", "--name", baseline)
    return _submit(out, *args, *extra)


@pytest.fixture(scope="module")
def clinic_api(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``effectbench submit`` of screen_only on the clinic's API level, 3 trials."""
    out = tmp_path_factory.mktemp("clinic-api")
    return _submit(
        out, "--pack", "clinic", "--baseline", "screen_only", "--trials", "3", "--name", "api"
    )


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A custom system's MockMed bundle with receipts (screen_only's rows, not a baseline)."""
    return make_bundle(tmp_path_factory.mktemp("mock") / "b", declare_baseline=False)


# -- the rules: change sets, allowances, collateral -------------------------------------------


def test_a_change_set_lists_inserts_updates_with_old_and_new_deletes_and_untouched_tables() -> None:
    before = {
        "a": Table(("id",), ({"id": 1, "v": "x"}, {"id": 2, "v": "y"})),
        "b": Table(("id",), ({"id": 1, "v": "z"},)),
    }
    after = {
        "a": Table(("id",), ({"id": 1, "v": "x2"}, {"id": 3, "v": "w"})),
        "b": Table(("id",), ({"id": 1, "v": "z"},)),
    }
    cs = change_set(before, after)
    assert [(c.table, c.change, dict(c.key)) for c in cs.changes] == [
        ("a", "inserted", {"id": 3}),
        ("a", "updated", {"id": 1}),
        ("a", "deleted", {"id": 2}),
    ]
    assert dict(cs.changes[1].fields) == {"v": ("x", "x2")}
    assert cs.untouched == ("b",)


def test_allowed_changes_mark_a_second_table_a_homonym_and_a_delete_as_collateral() -> None:
    effect = Effect(
        kind=EffectKind.FIELD_EQUALS,
        match={"mrn": "M-1"},
        field="note",
        value="n",
        surface="enc",
        key_field="id",
    )
    allowed = allowed_by_contract([effect])
    assert AllowedChange("enc", "updated", {"mrn": "M-1"}, ("note",)) in allowed
    before = {
        "enc": Table(("id",), ({"id": 1, "mrn": "M-1", "note": ""}, {"id": 2, "mrn": "M-2"})),
        "pat": Table(("mrn",), ({"mrn": "M-1", "allergy": "latex"},)),
    }
    after = {
        "enc": Table(
            ("id",),
            ({"id": 1, "mrn": "M-1", "note": "n"}, {"id": 3, "mrn": "M-2", "note": "n"}),
        ),
        "pat": Table(("mrn",), ({"mrn": "M-1", "allergy": "none"},)),
    }
    cs = change_set(before, after)
    marks = dict(
        zip([(c.table, c.change) for c in cs.changes], collateral(cs, allowed), strict=True)
    )
    assert marks == {
        ("enc", "inserted"): True,  # the homonym's chart (M-2) written
        ("enc", "updated"): False,  # the declared read-back's field on its record
        ("enc", "deleted"): True,  # a row gone
        ("pat", "updated"): True,  # a second table changed
    }


def test_collateral_marks_agree_with_the_clinic_oracles_audit_of_the_delta(
    tmp_path: Path,
) -> None:
    """The clinic's oracle refuses an unexplained change; the receipt marks exactly those."""
    pack = ClinicProvider()
    task = next(t for t in pack.tasks() if t.task_id == "clinic::sign_and_bill")
    params = pack.trial_params(task, 0)
    effects = [e.resolve(params) for e in task.expected_effect]
    allowed = pack.allowed_changes(task, params)
    for name, attack in attacks(PLAN, effects, params).items():
        path = provision_copy(tmp_path / f"{name}.sqlite")
        oracle = SqliteOracle(path, effects, lambda: True)
        before = oracle.snapshot()
        for write in attack.writes:
            attack_file(path, write)
        verdict = oracle.judge(before)
        old, new = oracle.tables(before), oracle.tables(oracle.snapshot())
        assert old is not None and new is not None
        marked = any(collateral(change_set(old, new), allowed))
        unexplained = verdict.reason.startswith("collateral change outside the declared effect")
        assert marked == unexplained, (name, verdict.reason)
    pack.close()


def test_every_clinic_fault_and_mockmed_task_states_its_mechanism() -> None:
    assert set(SAVE_FAULTS + EDIT_FAULTS) <= set(MECHANISMS)
    pack = MockMedProvider()
    assert all(pack.mechanism(t) for t in pack.tasks())


# -- what the harness writes -----------------------------------------------------------------


def test_submit_writes_one_receipt_per_row_and_a_swer_receipt_names_the_differing_field(
    clinic_api: Path,
) -> None:
    rows, receipts = read_rows(clinic_api), read_receipts(clinic_api)
    assert read_submission(clinic_api)["effectbench_bundle_version"] == 2
    assert len(rows) == len(receipts) == 81
    assert [r["episode_id"] for r in rows] == [r["episode_id"] for r in receipts]
    assert not (clinic_api / "frames").exists()  # the API level shows no pixels
    at = next(
        i
        for i, r in enumerate(rows)
        if r["task_id"] == "clinic::partial_note" and r["outcome"] == "silent_wrong_effect"
    )
    receipt = Receipt.from_json(json.dumps(receipts[at]))
    assert receipt.claim.reported_success and receipt.claim.message == rows[at]["agent"]["message"]
    assert receipt.task.mechanism.startswith("the save path stores the encounter with its note")
    (differs,) = [e for e in receipt.effects or [] if e.state.value != "correct"]
    assert differs.field == "note" and differs.evidence.values == [""]
    assert str(differs.expected).startswith("triage note ")
    assert [a.name for a in receipt.actions if a.kind == "api"] == [
        "find_patients",
        "open_chart",
        "save_encounter",
    ]
    assert receipt.changes is not None and receipt.changes.untouched == [
        "billing",
        "patients",
        "sqlite_master",
    ]
    assert (receipt.truth.outcome.value, receipt.truth.swer_variant.value) == (
        "silent_wrong_effect",
        "wrong_write",
    )


def test_a_write_beside_a_correct_one_is_a_collateral_write_in_the_rate(clinic_api: Path) -> None:
    receipts = {(r["task_id"], r["trial"]): r for r in read_receipts(clinic_api)}
    stale = receipts[("clinic::stale_allergies", 0)]
    (patient,) = [c for c in stale["changes"]["rows"] if c["table"] == "patients"]
    assert patient["collateral"] and patient["fields"] == {"allergies": ["latex", "none recorded"]}
    assert not receipts[("clinic::clean_draft", 0)]["collateral"]
    report = verify_bundle(clinic_api, UNSIGNED)
    assert report.status.value == "preview", report.finding_ids()
    assert report.tasks is not None
    rate = task_rate(report.tasks, "collateral_write")
    flagged = sum(1 for r in receipts.values() if r["collateral"])
    assert rate.numerator == flagged > 0 and rate.denominator == 81


def test_the_collateral_event_is_counted_only_when_every_row_has_a_receipt() -> None:
    pack = get_pack("mockmed")
    rows = evaluate(get_baseline("screen_only", pack), pack, trials=2).rows
    flags = [bool(evidence_of(r).receipt.collateral) for r in rows]  # type: ignore[union-attr]
    known = task_table(episode_frame(rows, flags))
    assert "collateral_write" in known.events and sum(known.events["collateral_write"]) == 2
    assert "collateral_write" not in task_table(episode_frame(rows)).events
    assert COLLATERAL_COLUMN not in episode_frame(rows)


# -- what the verifier refuses ----------------------------------------------------------------

Edit = Callable[[list[dict[str, Any]]], None]


def _first(receipts: list[dict[str, Any]], task: str, trial: int = 0) -> dict[str, Any]:
    return next(r for r in receipts if r["task_id"] == task and r["trial"] == trial)


def _note_of_the_partial_save(receipts: list[dict[str, Any]]) -> None:
    (row,) = _first(receipts, "clinic::partial_note")["changes"]["rows"]
    row["values"]["note"] = "triage note, as if saved"


def _old_allergy(receipts: list[dict[str, Any]]) -> None:
    stale = _first(receipts, "clinic::stale_allergies")
    (patient,) = [c for c in stale["changes"]["rows"] if c["table"] == "patients"]
    patient["fields"]["allergies"][0] = "none recorded"


def _swap(receipts: list[dict[str, Any]]) -> None:
    receipts[3], receipts[4] = receipts[4], receipts[3]


def _no_row(receipts: list[dict[str, Any]]) -> None:
    receipts.append({**receipts[0], "episode_id": "screen_only::clinic::nowhere::t0"})


def _unknown_table(receipts: list[dict[str, Any]]) -> None:
    changes = receipts[0]["changes"]
    changes["tables"] = sorted([*changes["tables"], "audit_log"])
    changes["untouched"] = sorted([*changes["untouched"], "audit_log"])


def _unmark(receipts: list[dict[str, Any]]) -> None:
    stale = _first(receipts, "clinic::stale_allergies")
    for change in stale["changes"]["rows"]:
        change["collateral"] = False
    stale["collateral"] = False


def _thinned(receipt: dict[str, Any], keep: Callable[[dict[str, Any]], bool]) -> None:
    """Keep only the changes ``keep`` says of ``receipt``'s change set, restating its untouched
    tables and collateral flag as if nothing else had changed."""
    changes = receipt["changes"]
    changes["rows"] = [c for c in changes["rows"] if keep(c)]
    touched = {c["table"] for c in changes["rows"]}
    changes["untouched"] = sorted(set(changes["tables"]) - touched)
    receipt["collateral"] = any(c["collateral"] for c in changes["rows"])


def _collateral_receipts(receipts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in receipts if r["collateral"]]


def _emptied_under_a_collateral_reading(receipts: list[dict[str, Any]]) -> None:
    """The homonym's receipt: its only change (another patient's encounter) left out."""
    receipt = next(
        r
        for r in _collateral_receipts(receipts)
        if all(e["state"] == "absent" for e in r["effects"])
    )
    _thinned(receipt, lambda c: False)


def _collateral_dropped_beside_a_wrong_effect(receipts: list[dict[str, Any]]) -> None:
    """A receipt whose declared effect persisted wrong and which wrote outside its allowance
    too: the collateral changes left out, the ones its effects read kept."""
    receipt = next(
        r
        for r in _collateral_receipts(receipts)
        if any(e["state"] == "wrong_persisted" for e in r["effects"])
        and any(not c["collateral"] for c in r["changes"]["rows"])
    )
    _thinned(receipt, lambda c: not c["collateral"])


def _markup_claim(receipts: list[dict[str, Any]]) -> None:
    receipts[0]["claim"]["message"] = "<script>alert(1)</script>"


def _markup_record_value(receipts: list[dict[str, Any]]) -> None:
    (row,) = _first(receipts, "clinic::partial_note")["changes"]["rows"]
    row["values"]["status"] = '<img src=x onerror="alert(1)">'


def _markup_note(receipts: list[dict[str, Any]]) -> None:
    receipts[1]["note"] = "see <a href='javascript:alert(1)'>this</a>"


def _flip_outcome(receipts: list[dict[str, Any]]) -> None:
    receipt = _first(receipts, "clinic::partial_note")
    receipt["truth"]["outcome"] = "success"
    receipt["truth"]["swer_variant"] = "none"


def _other_mechanism(receipts: list[dict[str, Any]]) -> None:
    receipts[0]["task"]["mechanism"] = "nothing happened"


def _not_json(receipts: list[dict[str, Any]]) -> None:
    receipts[2] = {"receipt_version": 1}


CASES: dict[str, tuple[Edit, str]] = {
    "one value of a change set (the note the partial save dropped)": (
        _note_of_the_partial_save,
        "receipt.evidence",
    ),
    "one old value of an update": (_old_allergy, "receipt.change_set"),
    "two receipts swapped": (_swap, "receipt.order"),
    "a receipt of no row": (_no_row, "receipt.extra"),
    "a table the pack does not have": (_unknown_table, "receipt.change_set"),
    "a collateral write unmarked": (_unmark, "receipt.collateral"),
    "a change set emptied under a reading that reports a collateral write": (
        _emptied_under_a_collateral_reading,
        "receipt.thinned",
    ),
    "a collateral change dropped beside a wrong effect": (
        _collateral_dropped_beside_a_wrong_effect,
        "receipt.thinned",
    ),
    "a script in the claim": (_markup_claim, "receipt.markup"),
    "markup in a record value": (_markup_record_value, "receipt.markup"),
    "a script address in the note": (_markup_note, "receipt.markup"),
    "a truth row with another label": (_flip_outcome, "receipt.outcome"),
    "another mechanism": (_other_mechanism, "receipt.task"),
    "not a receipt": (_not_json, "receipt.malformed"),
}


@pytest.mark.parametrize(("edit", "check"), [pytest.param(*v, id=k) for k, v in CASES.items()])
def test_a_forged_receipt_is_refused_with_its_check_id(
    clinic_api: Path, tmp_path: Path, edit: Edit, check: str
) -> None:
    bundle = copy_bundle(clinic_api, tmp_path / "b")
    edit_receipts(bundle, edit)
    report = verify_bundle(bundle, UNSIGNED)
    assert report.status.value == "refused"
    assert check in report.finding_ids(), report.finding_ids()
    assert report.check(Family.RECEIPT).n_findings
    assert {f.partition(".")[0] for f in report.finding_ids()} <= {"receipt"}


def test_no_collateral_write_can_be_thinned_out_of_a_bundle(
    clinic_api: Path, tmp_path: Path
) -> None:
    """Every receipt with a collateral write, its change set emptied (or its collateral changes
    dropped, the others kept): each is refused, so the collateral-write rate cannot be lowered
    by thinning receipts (it fell from 90 to 10 of 270 episodes before ``receipt.thinned``)."""
    collateral = len(_collateral_receipts(read_receipts(clinic_api)))
    assert collateral >= 6
    for label, keep in (("emptied", lambda c: False), ("dropped", lambda c: not c["collateral"])):
        bundle = copy_bundle(clinic_api, tmp_path / label)

        def thin(
            receipts: list[dict[str, Any]], keep: Callable[[dict[str, Any]], bool] = keep
        ) -> None:
            for receipt in _collateral_receipts(receipts):
                _thinned(receipt, keep)

        edit_receipts(bundle, thin)
        report = verify_bundle(bundle, UNSIGNED)
        # one finding a receipt: thinned, or (an emptied change set that no longer inserts
        # the rows a new-records effect counts) its evidence
        assert "receipt.thinned" in report.finding_ids(), label
        assert report.finding_ids() <= {"receipt.thinned", "receipt.evidence"}, label
        assert report.check(Family.RECEIPT).n_findings == collateral, label


def test_a_lost_record_left_out_of_the_change_set_is_refused(tmp_path: Path) -> None:
    """MockMed's effect_verified deletes a record it should keep (its evidence counts it lost,
    a collateral loss): the deletion left out of the change set is refused."""
    bundle = make_bundle(tmp_path / "b", "effect_verified", declare_baseline=False)
    assert _ids(bundle) == set()
    lost = [r for r in read_receipts(bundle) if any(e["evidence"]["lost"] for e in r["effects"])]
    assert lost

    def drop_deletions(receipts: list[dict[str, Any]]) -> None:
        for receipt in receipts:
            if any(e["evidence"]["lost"] for e in receipt["effects"]):
                _thinned(receipt, lambda c: c["change"] != "deleted")

    edit_receipts(bundle, drop_deletions)
    report = verify_bundle(bundle, UNSIGNED)
    assert report.finding_ids() == {"receipt.thinned"}, report.finding_ids()
    assert report.check(Family.RECEIPT).n_findings == len(lost)


def test_markup_spelt_with_json_escapes_is_refused(clinic_api: Path, tmp_path: Path) -> None:
    """The markup check reads a receipt's line as it is only when nothing in it is escaped:
    a tag and a script address written with JSON's escapes (which the line does not show as
    such) are found in the receipt's texts."""
    bundle = copy_bundle(clinic_api, tmp_path / "b")
    edit_receipts(bundle, _markup_claim)
    edit_receipts(bundle, _markup_note)
    path = bundle / "receipts.jsonl"
    text = path.read_text(encoding="utf-8")
    hidden = text.replace("<", "\\u003c").replace("javascript:", "java\\u0073cript:")
    assert "<" not in hidden and "javascript:" not in hidden and hidden != text
    path.write_text(hidden, encoding="utf-8")
    report = verify_bundle(bundle, UNSIGNED)
    markup = [f for c in report.checks for f in c.findings if f.check == "receipt.markup"]
    assert report.status.value == "refused" and len(markup) == 2, report.finding_ids()


MARKUP_DATA: list[Any] = [
    {"message": "done", "values": {"note": "a < 3", "n": 3}},  # a comparison, not a tag
    {"message": "ends with <", "note": "a tag's name starts the next field"},  # split: none
    {"note": "java", "next": "script: across two fields"},  # split: none
    {"values": {"<b>": 1}},  # a key
    {"rows": [{"values": {"note": "x"}}, {"values": {"note": "<\n/p>"}}]},  # after a newline
    {"note": "javaſcript:alert(1)"},  # a long s: the same letter to a case-blind match
    {"note": "VBScript :x", "rows": []},
    ["plain", ["nested", {"deep": ("tuple", "<!-- comment")}]],
    {"note": 'quoted "<b>" in a text JSON escapes'},
    {"note": "C:\\path\\ <i>x</i>", "n": 2**70},  # a backslash; a number JSON cannot hold
    {"values": {"note": "<", "b": "x"}, "k": ["javascript", ":"]},  # JSON's punctuation between
]
SCRIPT_ADDRESSES = ["JaVaScRiPt:", "vbscr\u0131pt :", "javascr\u0130pt:", "VB\u017fcript\n:"]
"""Script addresses in letters a case-blind match takes for ASCII ones."""
"""Receipt data where the check's shortcut (every text joined) and its field-by-field walk
must agree: markup split across fields, in a key, after a newline, in other letter cases."""


@pytest.mark.parametrize("data", MARKUP_DATA)
def test_the_markup_shortcut_agrees_with_the_field_by_field_check(data: Any) -> None:
    from verifier.receipts import MARKUP, _holds_markup, _joined_texts, _texts

    by_field = any(MARKUP.search(text) for _, text in _texts(data, ""))
    assert (MARKUP.search(_joined_texts(data)) is not None) == by_field
    assert _holds_markup(data) == by_field
    assert by_field == (3 <= MARKUP_DATA.index(data) < len(MARKUP_DATA) - 1)


@pytest.mark.parametrize("address", SCRIPT_ADDRESSES)
def test_the_markup_check_finds_a_script_address_in_any_letters(address: str) -> None:
    from verifier.receipts import MARKUP, markup_in

    assert MARKUP.search(address) is not None
    found = markup_in(f"see {address}alert(1)")
    assert found is not None and found.start() == 4
    assert markup_in(address.replace(":", "")) is None


def test_a_missing_receipts_file_or_line_is_refused(clinic_api: Path, tmp_path: Path) -> None:
    bundle = copy_bundle(clinic_api, tmp_path / "b")

    def drop_last(receipts: list[dict[str, Any]]) -> None:
        receipts.pop()

    edit_receipts(bundle, drop_last)
    assert "receipt.missing" in _ids(bundle)
    (bundle / "receipts.jsonl").unlink()
    assert _ids(bundle) == {"receipt.missing"}


def test_a_forged_row_is_refused_by_its_receipt_too(clinic_api: Path, tmp_path: Path) -> None:
    """A row relabelled (and the claims restated) contradicts the receipt that still holds
    what the episode gave."""
    bundle = copy_bundle(clinic_api, tmp_path / "b")

    def relabel(rows: list[dict[str, Any]]) -> None:
        row = next(r for r in rows if r["outcome"] == "silent_wrong_effect")
        row["agent"]["reported_success"] = False
        row["outcome"], row["swer_variant"] = "wrong_action", "none"

    edit_rows(bundle, relabel, claims=True)
    assert {"receipt.claim", "receipt.outcome"} <= _ids(bundle)


def _frame(pixels: tuple[int, int] = (64, 40)) -> tuple[str, bytes]:
    out = io.BytesIO()
    Image.new("RGB", pixels, (20, 120, 40)).save(out, "WEBP", lossless=True)
    data = out.getvalue()
    return f"{hashlib.sha256(data).hexdigest()}.webp", data


def _with_frame(bundle: Path, name: str, data: bytes | None, filename: str | None = None) -> None:
    frames = bundle / "frames"
    frames.mkdir(exist_ok=True)
    if data is not None:
        (frames / (filename or name)).write_bytes(data)

    def refer(receipts: list[dict[str, Any]]) -> None:
        receipts[0]["frames"] = [{"name": name, "role": "first", "t": 0.0}]

    edit_receipts(bundle, refer)


def test_frames_that_are_not_what_their_names_say_are_refused(mock: Path, tmp_path: Path) -> None:
    name, data = _frame()
    good = copy_bundle(mock, tmp_path / "good")
    _with_frame(good, name, data)
    assert _ids(good) == set()  # a real frame, named by its hash: accepted
    cases: dict[str, Callable[[Path], None]] = {
        "a path in a frame name": (lambda b: _with_frame(b, "../../etc/passwd", None)),
        "a frame named but missing": (lambda b: _with_frame(b, name, None)),
        "a frame whose bytes changed": (
            lambda b: _with_frame(b, name, data[:-1] + bytes([data[-1] ^ 1]))
        ),
        "a text file named as a frame": (lambda b: _with_frame(b, _named(b"hello"), b"hello")),
        "a frame too wide": (lambda b: _with_frame(b, *_frame((9000, 4)))),
        "a folder in frames/": (lambda b: (b / "frames" / "sub").mkdir(parents=True)),
        "a frame no receipt names": (lambda b: _stray_frame(b)),
    }
    expected = {
        "a path in a frame name": "receipt.frame_name",
        "a frame named but missing": "receipt.frame_missing",
        "a frame whose bytes changed": "receipt.frame_hash",
        "a text file named as a frame": "receipt.frame_image",
        "a frame too wide": "receipt.frame_image",
        "a folder in frames/": "receipt.frame_name",
        "a frame no receipt names": "receipt.frame_unreferenced",
    }
    for label, make in cases.items():
        bundle = copy_bundle(mock, tmp_path / label.replace(" ", "-").replace("/", ""))
        make(bundle)
        assert expected[label] in _ids(bundle), label


def bomb_png(width: int, height: int, depth: int = 8) -> bytes:
    """A real PNG of ``width`` x ``height`` grey pixels: small on disk, huge decoded (its
    rows are compressed as they are made, so the test never holds them)."""
    pack = zlib.compressobj(9)
    row = b"\x00" * (1 + width * depth // 8)
    body = b"".join(pack.compress(row) for _ in range(height)) + pack.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data).to_bytes(4, "big")
        return len(data).to_bytes(4, "big") + kind + data + crc

    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([depth, 0, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def test_an_image_bomb_is_refused_by_its_header_before_anything_decodes_it(
    mock: Path, tmp_path: Path
) -> None:
    """8192 x 8192 pixels (256 MiB as RGBA) in a small file; a 16-bit frame counts twice;
    the bundle's frames together are bounded too (its frames in receipt order)."""
    data = bomb_png(8192, 8192)
    assert len(data) < 4 * 1024 * 1024
    bundle = copy_bundle(mock, tmp_path / "bomb")
    _with_frame(bundle, _named(data, "png"), data)
    report = verify_bundle(bundle, UNSIGNED)
    assert report.finding_ids() == {"receipt.frame_pixels"}
    (finding,) = [f for c in report.checks for f in c.findings]
    assert "8192x8192" in finding.message and str(finding.file).startswith("frames/")
    wide = bomb_png(3000, 3000, depth=16)  # 9 million pixels, 18 million as 8-bit ones
    header = read_header(wide, "x.png")
    assert not isinstance(header, str) and header.pixels == 18_000_000
    assert pixel_problem(header, Limits(), FrameBudget(1 << 32)) is not None
    narrow = read_header(bomb_png(3000, 3000), "x.png")
    assert not isinstance(narrow, str)
    budget = FrameBudget(20_000_000)
    said = [pixel_problem(narrow, Limits(), budget) for _ in range(4)]
    assert [s is None for s in said] == [True, True, False, True]  # refused once, on the 3rd
    assert said[2] is not None and said[2][0] is CheckId.RECEIPT_FRAME_PIXELS


def _named(data: bytes, kind: str = "webp") -> str:
    return f"{hashlib.sha256(data).hexdigest()}.{kind}"


def _stray_frame(bundle: Path) -> None:
    name, data = _frame((8, 8))
    (bundle / "frames").mkdir(exist_ok=True)
    (bundle / "frames" / name).write_bytes(data)


def test_a_format_1_bundle_is_verified_from_its_rows_and_holds_no_receipts(
    tmp_path: Path,
) -> None:
    rows_only = make_bundle(tmp_path / "v1", declare_baseline=False, receipts=False)
    report = verify_bundle(rows_only, UNSIGNED)
    assert report.status.value == "preview" and report.check(Family.RECEIPT).skipped
    assert report.unranked.startswith("format 1: made without receipts")
    assert report.tasks is not None and "collateral_write" not in report.tasks.events
    shutil.copy(make_bundle(tmp_path / "v2", declare_baseline=False) / "receipts.jsonl", rows_only)
    assert _ids(rows_only) == {"structure.unexpected_file"}


def test_rank_shows_a_format_1_bundle_unranked_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Beside a format 2 bundle, ``effectbench rank`` lists the format 1 one as a preview,
    unranked, and says why; the site's row carries the same reason."""
    from effectbench.site._entries import entry_from_report
    from effectbench.site._tables import entry_row

    subs = tmp_path / "subs"
    make_bundle(subs / "2026-12-05_with-receipts", declare_baseline=False)
    make_bundle(
        subs / "2026-12-05_rows-only", "effect_verified", declare_baseline=False, receipts=False
    )
    capsys.readouterr()
    assert main(["rank", str(subs), "--allow-unsigned", "--no-cache", "--no-reproduce"]) == 0
    out = capsys.readouterr().out.splitlines()
    lines = [line for line in out if ": net value" in line]  # the board's rows
    (unranked,) = [line for line in lines if "effect_verified" in line]
    assert "preview, not ranked: format 1: made without receipts" in unranked
    assert unranked.split()[0] == "-"  # no rank
    (report,) = verify_path(subs / "2026-12-05_rows-only", UNSIGNED)
    entry = entry_from_report(report)
    assert entry.tasks is not None
    row = entry_row(entry, entry.tasks, "web", DEFAULT_PRICES)
    assert row["status"] == "preview" and row["unranked"] == report.unranked != ""


def test_a_seed_shifted_copy_is_refused_by_its_receipts(mock: Path, tmp_path: Path) -> None:
    """Rows re-seeded by a copier claim other trials' payloads than their receipts hold."""
    bundle = copy_bundle(mock, tmp_path / "b")

    def shift(items: list[dict[str, Any]]) -> None:
        for item in items:
            item["seed"] = item["seed"] + 100

    edit_rows(bundle, shift, claims=False)
    edit_receipts(bundle, shift)
    data = read_submission(bundle)
    data["seeds"] = [s + 100 for s in data["seeds"]]
    write_submission(bundle, data)
    assert "receipt.evidence" in _ids(bundle)


def test_reproduction_compares_the_rerun_change_sets(tmp_path: Path) -> None:
    """A value the receipt's own checks cannot tie down (an inserted row's idempotency key on
    MockMed, whose effects are not new-records effects) still differs from the re-run's."""
    bundle = make_bundle(tmp_path / "b", "screen_only")
    assert verify_bundle(bundle, VerifyOptions(allow_unsigned=True)).reproduced is True

    def edit(receipts: list[dict[str, Any]]) -> None:
        row = receipts[0]["changes"]["rows"][0]
        row["values"]["idempotency_key"] = "key-elsewhere"

    edit_receipts(bundle, edit)
    report = verify_bundle(bundle, VerifyOptions(allow_unsigned=True))
    assert report.finding_ids() == {"reproduce.change_set"}


def test_a_resumed_run_keeps_the_receipts_of_the_episodes_it_journalled(tmp_path: Path) -> None:
    """The journal keeps each finished episode's receipt beside it; a resumed submit's bundle
    has every receipt and verifies; the receipts folder goes with the journal."""
    journal = tmp_path / "run.journal"
    args = ["run", "--pack", "mockmed", "--baseline", "screen_only", "--trials", "3"]
    assert main([*args, "--journal", str(journal), "--progress", "off"]) == 0
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:12]))  # as if killed after 11 episodes
    kept = sorted((tmp_path / "run.journal.receipts").glob("*.json"))
    assert len(kept) == 27  # every finished episode's receipt, beside the journal
    bundle = _submit_mockmed(tmp_path / "subs", "screen_only", "--resume", str(journal))
    assert len(read_receipts(bundle)) == 27
    assert _ids(bundle) == set()
    retire_journal(journal, bundle)  # the bundle holds every receipt: both go
    assert not journal.exists() and not (tmp_path / "run.journal.receipts").exists()


def test_the_receipt_of_an_in_process_run_travels_with_its_row_through_workers(
    tmp_path: Path,
) -> None:
    bundle = _submit_mockmed(tmp_path / "subs", "effect_verified", "--workers", "2")
    receipts = read_receipts(bundle)
    assert len(receipts) == 27 and _ids(bundle) == set()
    readbacks = [a for r in receipts for a in r["actions"] if a["kind"] == "readback"]
    assert readbacks and all(a["name"] == "mockmed" for a in readbacks)


def test_the_verifier_derives_each_effects_verdict_with_the_judges_own_rule(
    clinic_api: Path,
) -> None:
    """Every effect reading of every receipt: the judge decides its evidence as it says."""
    from effectbench.receipts.derive import decided

    pack = ClinicProvider()
    tasks = {t.task_id: t for t in pack.tasks()}
    for raw in read_receipts(clinic_api):
        receipt = Receipt.from_json(json.dumps(raw))
        task = tasks[receipt.task_id]
        params = pack.trial_params(task, receipt.seed or 0)
        for effect, reading in zip(task.expected_effect, receipt.effects or [], strict=True):
            assert decided(effect.resolve(params), reading) == (reading.verdict, reading.state)
    pack.close()


def test_check_ids_of_the_receipt_family_are_registered() -> None:
    ids = {c.value for c in CheckId if c.family is Family.RECEIPT}
    assert {
        "receipt.missing",
        "receipt.extra",
        "receipt.order",
        "receipt.evidence",
        "receipt.change_set",
        "receipt.collateral",
        "receipt.frame_name",
        "receipt.frame_hash",
        "receipt.frame_image",
        "receipt.frame_pixels",
        "receipt.markup",
    } <= ids


def test_a_recorded_env_offers_the_all_surfaces_readback_it_wraps() -> None:
    """``isinstance`` with a runtime protocol looks attributes up statically on Python 3.12
    and later (never through ``__getattr__``): the recorders define the readback themselves,
    or ``effect_verified_all`` would halt on every recorded episode there."""
    import inspect

    from effectbench.receipts.recorder import ActionLog, RecordedComputer, RecordedEnv
    from effectbench.seam import ReadsAllSurfaces

    for recorder in (RecordedEnv, RecordedComputer):
        inspect.getattr_static(recorder, "all_surfaces_verifier")  # defined, not forwarded
    pack = get_pack("clinic")
    task = next(t for t in pack.tasks() if t.task_id == "clinic::clean_draft")
    with pack.provision(task, 0, pack.trial_params(task, 0)) as episode:
        recorded = RecordedEnv(episode.env, ActionLog())
        assert isinstance(recorded, ReadsAllSurfaces)
        readback = recorded.all_surfaces_verifier()
        assert readback is not None and readback.name == "rest:all-surfaces"
    run = evaluate(get_baseline("effect_verified_all", pack), pack, trials=1, tasks=[task])
    assert [r.outcome.value for r in run.rows] == ["success"]


def test_the_site_publishes_frames_re_encoded_within_its_bound(tmp_path: Path) -> None:
    """A frame within the verifier's bound but larger than the site's is published scaled
    down (a new file, never the submitted one); a screen keeps its size. (A frame over the
    verifier's bound, or one that does not decode, is refused by the verifier, and the site
    publishes frames of bundles it accepted only: tests/test_frames_decoded.py.)"""
    from effectbench.site._frames import MAX_SIDE, rendition

    frames = tmp_path / "frames"
    frames.mkdir()
    cache = tmp_path / "cache"
    big = bomb_png(4000, 3000)
    (frames / _named(big, "png")).write_bytes(big)
    published = rendition(frames / _named(big, "png"), cache)
    assert published.read_bytes() != big
    with Image.open(published) as image:
        assert max(image.size) == MAX_SIDE and image.size == (MAX_SIDE, MAX_SIDE * 3 // 4)
    name, screen = _frame((1024, 640))
    (frames / name).write_bytes(screen)
    kept = rendition(frames / name, cache)
    with Image.open(kept) as image:
        assert image.size == (1024, 640) and image.format == "WEBP"


def test_task_data_are_kept_per_pack_class_and_fingerprint() -> None:
    """A bundle's check reuses the task data of an earlier bundle of the same provider class
    and fingerprint (a fresh provider of the same pack), never another pack's; the last few
    packs are kept, and without a fingerprint nothing is."""
    clinic = get_pack("clinic")
    fp = fingerprint(clinic.manifest())
    first = receipt_tasks(clinic, fp)
    assert receipt_tasks(get_pack("clinic"), fp) is first
    assert set(first) == {t.task_id for t in clinic.tasks()}
    assert receipt_tasks(clinic, fp + "0") is not first
    mockmed = get_pack("mockmed")
    assert set(receipt_tasks(mockmed, fp)) == {t.task_id for t in mockmed.tasks()}  # its class
    assert receipt_tasks(clinic, "") is not receipt_tasks(clinic, "")
    for i in range(TASKS_KEPT):
        receipt_tasks(clinic, f"sha256:{i}")
    assert receipt_tasks(clinic, fp) is not first  # the oldest fell out

    facts = kept_pack_tasks(clinic, fp, "dev")
    assert facts == pack_tasks(clinic, "dev") and facts is not kept_pack_tasks(clinic, fp, "dev")
    assert kept_pack_tasks(mockmed, fp, "dev") == pack_tasks(mockmed, "dev")
