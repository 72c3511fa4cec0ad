"""The generated clinic catalogue: deterministic, distinct, big enough, sequestered by a secret,
and the ladder of the three reference arms holds on every generated dev task (api)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.generated import mdd_by_level

from effectbench.baselines import get_baseline
from effectbench.cli import main
from effectbench.errors import UsageError
from effectbench.hashing import trial_tag
from effectbench.kit.generate import (
    SECRET_ENV,
    Draw,
    GenerationError,
    Template,
    distinct_key,
    generate,
    sequestered_seed,
    split_digest,
)
from effectbench.manifest import fingerprint
from effectbench.metrics.clustered import design_effect
from effectbench.metrics.detection import auroc
from effectbench.metrics.power import minimum_detectable_difference
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.generated import (
    ALLERGIES,
    CODES,
    DEV_COUNTS,
    DEV_SEED,
    NAME,
    NOTES,
    TEMPLATES,
    TYPES,
    GeneratedTask,
    dev_split,
    sequestered_split,
)
from effectbench.packs.clinic.generated_pack import (
    SCREEN_SAMPLE,
    GeneratedClinicProvider,
    screen_sample,
    world_template,
)
from effectbench.packs.clinic.store import ClinicStore, Fault
from effectbench.run import run
from effectbench.run.runner import evaluate
from effectbench.schema import Category, Split, Substrate

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("screen_only", "effect_verified", "effect_verified_all")
SWER = "silent_wrong_effect"


def test_generation_is_deterministic_from_the_seed() -> None:
    again = generate(TEMPLATES, DEV_COUNTS, DEV_SEED, Split.DEV)
    assert again == dev_split()
    other = generate(TEMPLATES, DEV_COUNTS, DEV_SEED + "-other", Split.DEV)
    assert {t.name for t in other}.isdisjoint({t.name for t in dev_split()})


def test_a_task_is_stable_from_its_template_and_seed_alone() -> None:
    """Drawing fewer tasks keeps the ones drawn: a task depends on (seed, template, index)."""
    fewer = generate(TEMPLATES, {"partial_sign": 3}, DEV_SEED, Split.DEV)
    assert fewer == tuple(t for t in dev_split() if t.template == "partial_sign")[:3]


def test_ids_are_unique_and_every_category_has_thirty_tasks() -> None:
    tasks = dev_split()
    assert len(tasks) >= 250
    assert len({t.task_id for t in tasks}) == len(tasks)
    counts = Counter(t.category for t in tasks)
    assert all(counts[c] >= 30 for c in Category if c is not Category.CONTROL), counts
    assert 60 <= counts[Category.CONTROL] <= 80
    assert all(t.task_id.startswith("clinic-generated::") for t in tasks)


def test_two_generated_tasks_are_distinct_in_situation_or_payload() -> None:
    """Distinct: no two tasks share (situation, payload) (``distinct_key``), and within a
    template the drawn referral (name, birth date, MRN) is never repeated."""
    tasks = dev_split()
    assert len({distinct_key(t) for t in tasks}) == len(tasks)
    for template in TEMPLATES:
        mine = [t for t in tasks if t.template == template.name]
        referrals = {(t.patient.name, t.patient.dob, t.patient.mrn) for t in mine}
        assert len(referrals) == len(mine), template.name


def test_situations_vary_within_the_templates_that_draw_them() -> None:
    tasks = dev_split()

    def seen(template: str, key: str) -> set[Any]:
        return {t.situation()["fault"][key] for t in tasks if t.template == template}

    assert seen("partial_sign", "dropped") == {"note", "charge_code", "status"}
    assert seen("duplicate_draft", "copies") == {2, 3}
    assert seen("duplicate_sign", "resubmit") == {"exact", "draft"}
    assert len(seen("validation_reject", "rejection")) >= 3
    assert seen("stale_demographics", "stale_field") == {"allergies", "dob"}
    assert seen("wrong_encounter_edit", "row_offset") == {-1, 1}
    assert seen("homonym_order", "name_match") == {"any_order"}
    last = {t.situation()["last_billed"] for t in tasks if t.template == "charge_wrong_patient"}
    assert last == {"homonym", "stranger"}
    kinds = {t.situation()["homonym"] for t in tasks if t.template == "homonym_resolved"}
    assert kinds == {"dob", "order", "merged"}


def test_one_payload_pool_whatever_the_situation() -> None:
    """Faulted and clean tasks draw their payload from the same pools, and the referral an
    agent reads does not tell a faulted task from a control by its length."""
    tasks = dev_split()
    for t in tasks:
        assert t.note_stem in NOTES and t.encounter_type in TYPES and t.charge_code in CODES
        assert all(p[4] in ALLERGIES for p in t.world.patients)
    faulted = [t for t in tasks if t.category is not Category.CONTROL]
    clean = [t for t in tasks if t.category is Category.CONTROL]
    for field in ("note_stem", "encounter_type", "charge_code"):
        assert {getattr(t, field) for t in faulted} == {getattr(t, field) for t in clean}

    def length(t: GeneratedTask) -> float:
        return float(len(" ".join(str(v) for v in t.brief(t.params(0)).values())))

    area = auroc([length(t) for t in faulted], [length(t) for t in clean])
    assert area is not None and 0.4 <= area <= 0.6, area


def _visible(t: GeneratedTask) -> dict[str, float]:
    """What an agent can see of a task before it acts: the referral, the chart around it."""
    brief = t.brief(t.params(0))
    facts = t.situation()
    return {
        "brief length": float(len(" ".join(str(v) for v in brief.values()))),
        "mrn shown": float(bool(brief.get("mrn"))),
        "sign shape": float(t.kind == "sign"),
        "world encounters": float(len(t.world.encounters)),
        "homonym present": float(facts["homonym"] != "none"),
        "homonym first": float(facts["homonym_first"]),
    }


def test_no_single_visible_feature_tells_a_category_apart() -> None:
    """One category against the rest, each agent-visible feature alone: AUROC within 0.3 to
    0.7 (docs/generated-tasks.md; the edit shape, which only controls and C7 have, aside)."""
    tasks = dev_split()
    for category in Category:
        mine = [_visible(t) for t in tasks if t.category is category]
        rest = [_visible(t) for t in tasks if t.category is not category]
        for feature in mine[0]:
            area = auroc([v[feature] for v in mine], [v[feature] for v in rest])
            assert area is not None and 0.3 <= area <= 0.7, (category.value, feature, area)


def test_a_raising_or_repeating_template_is_named() -> None:
    def boom(d: Draw, name: str, split: Split) -> GeneratedTask:
        raise RuntimeError("no charts left")

    with pytest.raises(GenerationError, match="template 'boom' raised on draw 0"):
        generate([Template("boom", Category.CONTROL, boom)], {"boom": 1}, "s", Split.DEV)
    first = dev_split()[0]

    def same(d: Draw, name: str, split: Split) -> GeneratedTask:
        return first

    with pytest.raises(GenerationError, match="template 'same' drew task .* same name"):
        generate([Template("same", Category.CONTROL, same)], {"same": 2}, "s", Split.DEV)
    with pytest.raises(GenerationError, match="counts name no template: nope"):
        generate(TEMPLATES, {"nope": 1}, "s", Split.DEV)


@pytest.fixture(scope="module")
def pack() -> Iterator[GeneratedClinicProvider]:
    provider = GeneratedClinicProvider()
    yield provider
    provider.close()


@pytest.mark.slow
def test_without_the_secret_the_test_split_is_absent(
    pack: GeneratedClinicProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    assert sequestered_seed() is None and sequestered_split() is None
    manifest = pack.manifest()
    assert manifest["generation"]["test"]["present"] is False
    assert SECRET_ENV in manifest["generation"]["test"]["reason"]
    assert {t["split"] for t in manifest["tasks"]} == {"dev"}
    assert all(t.split is Split.DEV for t in pack.tasks())
    assert manifest["generation"]["dev"]["tasks"] == len(dev_split())
    with pytest.raises(UsageError, match=f"no task in split 'test': .*{SECRET_ENV}.* not set"):
        run(pack, baseline="screen_only", trials=1, split="test")


@pytest.mark.slow
def test_with_the_secret_the_manifest_commits_by_digest_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(SECRET_ENV, "a secret for this test")
    secret = sequestered_split()
    assert secret is not None and all(t.split is Split.TEST for t in secret)
    assert {t.name for t in secret}.isdisjoint({t.name for t in dev_split()})
    assert sequestered_split("another secret") != secret
    counts = Counter(t.category for t in secret)
    assert all(counts[c] >= 8 for c in Category)
    with GeneratedClinicProvider() as provider:
        tests = [t for t in provider.tasks() if t.split is Split.TEST]
        assert len(tests) == len(secret) + 3 * len(screen_sample(secret))
        manifest = provider.manifest()
    text = json.dumps(manifest)
    assert manifest["generation"]["test"] == {
        "present": True,
        "tasks": len(secret),
        "digest": split_digest(secret),
    }
    assert not any(t.name in text for t in secret)  # neither ids nor wiring are published


def test_the_clinic_catalogue_and_its_fingerprint_are_untouched() -> None:
    """The shipped references are made on the clinic's 30 written tasks: its manifest stays
    what docs/packs publishes."""
    published = json.loads((ROOT / "docs" / "packs" / "clinic.manifest.json").read_text())
    with ClinicProvider() as clinic:
        assert fingerprint(clinic.manifest()) == fingerprint(published)


@pytest.mark.slow
def test_the_screens_offer_the_declared_stratified_sample(pack: GeneratedClinicProvider) -> None:
    """Every task runs on the API; each screen offers the same declared sample: eight tasks of
    every category, spread over the category's templates, named in the manifest."""
    sample = screen_sample(dev_split())
    counts = Counter(t.category for t in sample)
    assert all(counts[c] == SCREEN_SAMPLE for c in Category)
    for category in Category:
        have = {t.template for t in dev_split() if t.category is category}
        got = {t.template for t in sample if t.category is category}
        assert got <= have and len(got) == min(len(have), SCREEN_SAMPLE)  # each in turn
    assert {t.template for t in sample} == {t.name for t in TEMPLATES}
    on: dict[Substrate, set[str]] = {}
    for spec in pack.tasks():
        on.setdefault(spec.substrate, set()).add(pack.definition(spec).name)
    assert on[Substrate.API] == {t.name for t in dev_split()}
    for substrate in (Substrate.WEB, Substrate.DESKTOP, Substrate.REMOTE_DISPLAY):
        assert on[substrate] == {t.name for t in sample}
    assert pack.manifest()["generation"]["screens"]["dev_tasks"] == [t.name for t in sample]


@pytest.mark.slow
def test_every_generated_task_is_audited_on_its_own_world(pack: GeneratedClinicProvider) -> None:
    assert all(pack.audit[t.task_id].passed for t in dev_split())
    worlds = {t.initial_state["template"] for t in pack.tasks()}
    assert len(worlds) == len(dev_split())


def _rows(pack: GeneratedClinicProvider) -> dict[str, list[Any]]:
    tasks = [t for t in pack.tasks() if t.substrate is Substrate.API and t.split is Split.DEV]
    runs = {arm: evaluate(get_baseline(arm, pack), pack, trials=1, tasks=tasks) for arm in ARMS}
    assert not any(run.dropped for run in runs.values())
    return {arm: list(run.rows) for arm, run in runs.items()}


@pytest.fixture(scope="module")
def rows(pack: GeneratedClinicProvider) -> dict[str, list[Any]]:
    return _rows(pack)


def swer(rows: list[Any]) -> float:
    return float(sum(r.outcome.value == SWER for r in rows) / len(rows))


@pytest.mark.slow
def test_the_ladder_holds_on_every_generated_dev_task(rows: dict[str, list[Any]]) -> None:
    """About 30 s: 296 tasks x 3 arms on the api substrate."""
    rates = {arm: swer(rows[arm]) for arm in ARMS}
    assert rates["effect_verified_all"] <= rates["effect_verified"] <= rates["screen_only"]
    assert rates["effect_verified_all"] == 0.0  # as on the written tasks
    assert rates["effect_verified"] < rates["screen_only"] / 2
    for category in Category:  # and within each category
        per = {arm: swer([r for r in rows[arm] if r.category is category]) for arm in ARMS}
        assert per["effect_verified_all"] == 0.0 <= per["effect_verified"] <= per["screen_only"]


@pytest.mark.slow
def test_the_documented_minimum_detectable_differences_are_measured(
    pack: GeneratedClinicProvider, rows: dict[str, list[Any]]
) -> None:
    """docs/generated-tasks.md states the figures this measures from the rows."""
    doc = (ROOT / "docs" / "generated-tasks.md").read_text()
    for arm in ("screen_only", "effect_verified"):
        for level, (clusters, points) in mdd_by_level(pack, rows[arm]).items():
            assert f"| {arm} | {level} | {clusters} | {points:.1f} |" in doc, (arm, level)


SHIPPED_API = [
    ROOT / "submissions" / f"2026-12-02_{arm.replace('_', '-')}-clinic-generated" for arm in ARMS
]


@pytest.mark.slow
def test_the_generated_board_counts_templates_and_states_an_honest_mdd(
    pack: GeneratedClinicProvider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The board of the shipped generated references clusters by template, the level where
    their outcomes correlate (:class:`~effectbench.seam.ClustersTasks`): its stated minimum
    detectable difference is recomputed here from the bundles' rows, template by template."""
    by_id = {t.task_id: t for t in pack.tasks()}
    assert {pack.cluster_of(t) for t in by_id.values() if t.substrate is Substrate.API} == {
        f"{NAME}::{t.name}" for t in TEMPLATES
    }
    folder = tmp_path / "submissions"
    folder.mkdir()
    neff = []
    for bundle in SHIPPED_API:
        shutil.copytree(bundle, folder / bundle.name)
        k: Counter[str] = Counter()
        m: Counter[str] = Counter()
        for line in (bundle / "episodes.jsonl").read_text().splitlines():
            row = json.loads(line)
            template = pack.definition(by_id[row["task_id"]]).template
            k[template] += row["outcome"] == SWER
            m[template] += 1
        assert len(m) == len(TEMPLATES) and sum(m.values()) == 3 * len(dev_split())
        neff.append(sum(m.values()) / design_effect([k[t] for t in m], [m[t] for t in m]))
    assert main(["rank", str(folder), "--json"]) == 0
    boards = {b["board"]: b for b in json.loads(capsys.readouterr().out)}
    board = boards[f"spec1-{NAME}-api"]
    assert len(board["rows"]) == len(ARMS)
    stated = board["single_rate_minimum_detectable_difference"]
    assert stated == pytest.approx(minimum_detectable_difference(sorted(neff)[1]), abs=1e-9)
    assert 0.3 < stated < 0.5  # 26 templates: the honest figure, far above 12 points


@pytest.mark.slow
def test_the_generation_benchmark_runs_in_its_quick_size() -> None:
    """benchmarks/bench_generate.py --quick: every figure printed, with the load average."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_generate.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for figure in ("draw one task", "draw the dev split", "build one task's world file"):
        assert figure in done.stdout
    assert done.stdout.count("one api episode") == 3
    assert all("[load average" in line for line in done.stdout.splitlines())


def _saved(task: GeneratedTask, tmp_path: Path, **fault: Any) -> dict[str, list[Any]]:
    """Save the task's trial-0 form through the clinic's store under ``fault``; return the
    rows the save added or changed, read over a connection of the test's own."""
    path = world_template(task).copy(tmp_path / "episode.sqlite")
    store = ClinicStore(path, Fault(**fault) if fault else task.fault)
    params = task.params(0)
    form = {
        "mrn": params["mrn"],
        "name": params["patient_name"],
        "type": params["type"],
        "note": params["note"],
        "idempotency_key": params["idempotency_key"],
        "sign": task.kind == "sign",
        "charge_code": params.get("charge_code"),
        "claim_ref": params.get("claim_ref"),
    }
    store.chart(params["mrn"])
    store.save(form)
    store.close()
    with sqlite3.connect(path) as conn:
        return {
            "encounters": conn.execute(
                "SELECT patient_mrn, note, status FROM encounters WHERE idempotency_key = ?",
                (params["idempotency_key"],),
            ).fetchall(),
            "billing": conn.execute(
                "SELECT patient_mrn, code FROM billing WHERE claim_ref = ?",
                (params.get("claim_ref", ""),),
            ).fetchall(),
            "patient": conn.execute(
                "SELECT dob, allergies FROM patients WHERE mrn = ?", (params["mrn"],)
            ).fetchall(),
        }


def _first(template: str) -> GeneratedTask:
    return next(t for t in dev_split() if t.template == template)


def test_the_drawn_fault_parameters_act_at_the_save_path(tmp_path: Path) -> None:
    sign = _first("clean_sign")
    mrn = sign.patient.mrn
    clean = _saved(sign, tmp_path)
    assert [r[0] for r in clean["encounters"]] == [mrn] and clean["billing"] == [
        (mrn, sign.charge_code)
    ]
    dropped = _saved(sign, tmp_path, name="partial", dropped="charge_code")
    assert dropped["billing"] == [(mrn, "")] and dropped["encounters"][0][1].endswith(
        trial_tag(sign.task_id, 0)
    )
    unsigned = _saved(sign, tmp_path, name="partial", dropped="status")
    assert [r[2] for r in unsigned["encounters"]] == ["draft"]
    three = _saved(sign, tmp_path, name="duplicate", copies=3)
    assert len(three["encounters"]) == 3 and len(three["billing"]) == 3
    replayed = _saved(sign, tmp_path, name="duplicate", resubmit="draft")
    assert [r[2] for r in replayed["encounters"]] == ["signed", "draft"]
    assert len(replayed["billing"]) == 1
    stale = _saved(sign, tmp_path, name="stale_allergies", stale_field="dob",
                   stale_allergies="1901-01-01")  # fmt: skip
    assert stale["patient"][0][0] == "1901-01-01"
    order = _first("homonym_order")
    landed = _saved(order, tmp_path)["encounters"]
    homonym = order.world.patients[0]
    assert homonym[1].split() == list(reversed(order.patient.name.split()))
    assert [r[0] for r in landed] == [homonym[0]]  # the faulty lookup ignores the name order


def test_a_fault_parameter_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="dropped must be one of note, charge_code, status"):
        Fault("partial", dropped="dob")
    with pytest.raises(ValueError, match="copies must be at least 2"):
        Fault("duplicate", copies=1)


@pytest.mark.slow
def test_a_test_split_bundle_verifies_only_with_its_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """About 15 s. A bundle of the sequestered split: the verifier with the same secret finds
    only the short run (1 trial); without it, the fingerprint and the split are refused, and
    the message names the secret."""
    monkeypatch.setenv(SECRET_ENV, "a secret for the verifier")
    out = tmp_path / "bundles"
    argv = ["submit", "--pack", "clinic-generated", "--baseline", "screen_only", "--trials", "1"]
    main(
        [*argv, "--split", "test", "--name", "sequestered", "--out", str(out), "--progress", "off"]
    )
    (bundle,) = out.iterdir()
    capsys.readouterr()

    def verify() -> dict[str, Any]:
        main(["verify", str(bundle), "--allow-unsigned", "--no-reproduce", "--json"])
        (report,) = json.loads(capsys.readouterr().out)
        return dict(report)

    def pack_findings(report: dict[str, Any]) -> str:
        (check,) = [c for c in report["checks"] if c["id"] == "pack"]
        return json.dumps(check["findings"])

    found = pack_findings(verify())
    assert "pack.min_trials" in found and "pack.fingerprint" not in found
    monkeypatch.delenv(SECRET_ENV)
    found = pack_findings(verify())
    assert "pack.fingerprint" in found and "pack.split" in found
    assert f"{SECRET_ENV}, which is not set" in found
