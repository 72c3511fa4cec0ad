"""The generated ticketing catalogue: deterministic, distinct, big enough, sequestered by a
secret, each task on a world of its own, and the ladder of the three reference arms holds on
every generated dev task (api), overall and within each category."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from effectbench_ticketing import TicketingProvider
from effectbench_ticketing.db import TEMPLATE
from effectbench_ticketing.generated import (
    CATALOGUE,
    DESCRIPTIONS,
    DEV_COUNTS,
    DEV_SEED,
    OUTAGES,
    SUBJECTS,
    TEMPLATES,
    GeneratedTask,
)
from effectbench_ticketing.generated_pack import GeneratedTicketingProvider
from effectbench_ticketing.store import Fault, TicketStore
from support.generated import mdd_by_level

from effectbench.api import (
    SEQUESTERED,
    Category,
    Split,
    Substrate,
    UsageError,
    distinct_key,
    evaluate,
    fingerprint,
    generate,
    get_baseline,
    trial_tag,
)
from effectbench.cli import main
from effectbench.kit.catalogue import screen_sample
from effectbench.kit.generate import SECRET_ENV, split_digest
from effectbench.metrics.detection import auroc
from effectbench.run import run

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("screen_only", "effect_verified", "effect_verified_all")
SWER = "silent_wrong_effect"
pytestmark = pytest.mark.postgres


def dev() -> tuple[GeneratedTask, ...]:
    return CATALOGUE.dev_split()


def test_generation_is_deterministic_from_the_seed() -> None:
    assert generate.generate(TEMPLATES, DEV_COUNTS, DEV_SEED, Split.DEV) == dev()
    other = generate.generate(TEMPLATES, DEV_COUNTS, DEV_SEED + "-other", Split.DEV)
    assert {t.name for t in other}.isdisjoint({t.name for t in dev()})
    assert {t.world.digest for t in other}.isdisjoint({t.world.digest for t in dev()})


def test_a_task_is_stable_from_its_template_and_seed_alone() -> None:
    fewer = generate.generate(TEMPLATES, {"stale_account": 3}, DEV_SEED, Split.DEV)
    assert fewer == tuple(t for t in dev() if t.template == "stale_account")[:3]


def test_ids_are_unique_and_every_category_has_thirty_tasks() -> None:
    tasks = dev()
    assert len(tasks) >= 250
    assert len({t.task_id for t in tasks}) == len(tasks)
    counts = Counter(t.category for t in tasks)
    assert all(counts[c] >= 30 for c in Category if c is not Category.CONTROL), counts
    assert 60 <= counts[Category.CONTROL] <= 80
    assert all(t.task_id.startswith("ticketing-generated::") for t in tasks)
    assert {t.template for t in tasks} == {t.name for t in TEMPLATES}


def test_two_generated_tasks_are_distinct_in_situation_or_payload() -> None:
    """Distinct: no two tasks share (situation, payload), no two share a world, and within a
    template the drawn request (name, domain, code) is never repeated."""
    tasks = dev()
    assert len({distinct_key(t) for t in tasks}) == len(tasks)
    assert len({t.world.digest for t in tasks}) == len(tasks)
    for template in TEMPLATES:
        mine = [t for t in tasks if t.template == template.name]
        requests = {(t.customer.name, t.customer.domain, t.customer.code) for t in mine}
        assert len(requests) == len(mine), template.name


def test_situations_vary_within_the_templates_that_draw_them() -> None:
    tasks = dev()

    def seen(template: str, key: str) -> set[Any]:
        return {t.situation()["fault"][key] for t in tasks if t.template == template}

    def fact(template: str, key: str) -> set[Any]:
        return {str(t.situation().get(key)) for t in tasks if t.template == template}

    assert seen("partial_credit", "dropped") == {"description", "priority", "credit"}
    assert seen("partial_open", "dropped") == {"description", "priority"}
    assert seen("duplicate_open", "copies") == {2, 3}
    assert seen("double_click", "copies") == {2, 3}
    assert len(seen("validation_reject", "rejection")) >= 3
    assert seen("wrong_ticket_reassign", "row_offset") == {-1, 1}
    assert fact("stale_ticket", "colleague_sets") == {"['priority']", "['status']", "['subject']"}
    assert fact("stale_account", "colleague_sets") == {"['contact_email']", "['plan']"}
    assert fact("credit_wrong_customer", "last_credited") == {"homonym", "stranger"}
    assert fact("homonym_resolved", "homonym") == {"domain", "closed", "merged"}
    assert {t.kind for t in tasks if t.template == "optimistic_rollback"} == {"open", "credit"}


def test_a_forced_homonym_is_where_the_faulty_lookup_lands() -> None:
    """C6 by name: the same-name account sorts first (a lookup by name lands on it); by code:
    the homonym's code is the requester's without its leading zero."""
    for t in dev():
        if t.template in ("homonym_domain", "homonym_closed"):
            same = [c for c in t.world.customers if c[1] == t.customer.name]
            assert min(c[0] for c in same) != t.customer.code, t.name
        if t.template == "homonym_code":
            codes = {c[0] for c in t.world.customers if c[1] == t.customer.name}
            assert codes == {t.customer.code, t.customer.code.replace("C-0", "C-", 1)}


def test_one_payload_pool_whatever_the_situation() -> None:
    """Faulted and clean tasks draw their payload from the same pools, and the request an
    agent reads does not tell a faulted task from a control by its length."""
    tasks = dev()
    for t in tasks:
        assert t.description in DESCRIPTIONS and t.subject in SUBJECTS + OUTAGES
    faulted = [t for t in tasks if t.category is not Category.CONTROL]
    clean = [t for t in tasks if t.category is Category.CONTROL]
    for field in ("description", "subject", "priority", "sla_code"):
        assert {getattr(t, field) for t in faulted} == {getattr(t, field) for t in clean}

    def length(t: GeneratedTask) -> float:
        return float(len(" ".join(str(v) for v in t.brief(t.params(0)).values())))

    area = auroc([length(t) for t in faulted], [length(t) for t in clean])
    assert area is not None and 0.35 <= area <= 0.65, area


def test_the_sequestered_split_is_drawn_from_the_secret_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    assert CATALOGUE.sequestered_split() is None
    secret = CATALOGUE.sequestered_split("a secret for this test")
    assert secret is not None and all(t.split is Split.TEST for t in secret)
    assert {t.name for t in secret}.isdisjoint({t.name for t in dev()})
    assert CATALOGUE.sequestered_split("another secret") != secret
    counts = Counter(t.category for t in secret)
    assert all(counts[c] >= 8 for c in Category), counts
    assert len(secret) == sum(CATALOGUE.test_counts.values())


def test_a_fault_parameter_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="dropped must be one of description, priority, credit"):
        Fault("partial", dropped="subject")
    with pytest.raises(ValueError, match="copies must be at least 2"):
        Fault("duplicate", copies=1)
    with pytest.raises(ValueError, match="row_offset must not be 0"):
        Fault("wrong_row", row_offset=0)


def test_packs_counts_prints_each_generated_catalogue_per_split_and_category(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``effectbench packs --counts`` draws the catalogues without building the packs."""
    monkeypatch.delenv(SECRET_ENV, raising=False)
    assert main(["packs", "--counts"]) == 0
    out = capsys.readouterr().out.split("\nticketing-generated\t", 1)[1]
    counts = ", ".join(f"{c.value} {32 if c is not Category.CONTROL else 72}" for c in Category)
    assert f"\tdev: 296 tasks: {counts}\n" in out
    assert f"\ttest: absent: {SECRET_ENV} is not set" in out
    monkeypatch.setenv(SECRET_ENV, "a secret for the counts")
    assert main(["packs", "--counts", "--json"]) == 0
    (row,) = [r for r in json.loads(capsys.readouterr().out) if "ticketing-generated" in r["names"]]
    test = row["tasks_per_split_and_category"]["test"]
    assert sum(test.values()) == 77 and min(test.values()) >= 8


@pytest.fixture(scope="module")
def pack() -> Iterator[GeneratedTicketingProvider]:
    """About 4 min on a loaded 2-core machine: the live audit probes all 296 worlds."""
    provider = GeneratedTicketingProvider()
    yield provider
    provider.close()


def test_the_written_catalogue_and_its_fingerprint_are_untouched() -> None:
    """The shipped ticketing references are made on its 30 written tasks: its manifest stays
    what docs/packs publishes (the fault parameters' defaults are the written behaviour)."""
    published = json.loads((ROOT / "docs" / "packs" / "ticketing.manifest.json").read_text())
    with TicketingProvider() as written:
        assert fingerprint(written.manifest()) == fingerprint(published)


@pytest.mark.slow
def test_every_generated_task_is_audited_on_its_own_world(
    pack: GeneratedTicketingProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert all(pack.audit[t.task_id].passed for t in dev())
    api = [t for t in pack.tasks() if t.substrate is Substrate.API]
    assert len({t.initial_state["template"] for t in api}) == len(dev())
    monkeypatch.delenv(SECRET_ENV, raising=False)
    manifest = pack.manifest()
    generation = manifest["generation"]
    assert generation["dev"]["tasks"] == len(dev()) and generation["test"]["present"] is False
    assert SECRET_ENV in generation["test"]["reason"]
    assert {t["split"] for t in manifest["tasks"]} == {"dev"}
    with pytest.raises(UsageError, match=f"no task in split 'test': .*{SECRET_ENV}.* not set"):
        run(pack, baseline="screen_only", trials=1, split="test")


@pytest.mark.slow
def test_with_the_secret_the_manifest_commits_by_digest_only(
    pack: GeneratedTicketingProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dev tasks' audit is this process's already; the 77 sequestered ones are probed."""
    monkeypatch.setenv(SECRET_ENV, "a secret for the manifest")
    secret = CATALOGUE.sequestered_split()
    assert secret is not None
    with GeneratedTicketingProvider() as provider:
        tests = [t for t in provider.tasks() if t.split is Split.TEST]
        screens = len(provider.substrates) - 1  # every task on the api, the sample on a screen
        assert len(tests) == len(secret) + screens * len(screen_sample(secret))
        assert all(provider.audit[t.task_id].passed for t in secret)
        manifest = provider.manifest()
        assert provider.mechanism(tests[0]) == SEQUESTERED
    assert manifest["generation"]["test"] == {
        "present": True,
        "tasks": len(secret),
        "digest": split_digest(secret),
    }
    text = json.dumps(manifest)
    assert not any(t.name in text for t in secret)  # neither ids nor wiring are published


def _saved(pack: GeneratedTicketingProvider, task: GeneratedTask, fault: Fault) -> dict[str, Any]:
    """Save the task's trial-0 form through the desk's store under ``fault`` on a fresh clone
    holding its world; return what the save wrote, read over a connection of the test's own."""
    database = "ep_generated_test"
    params = task.params(0)
    with pack.cluster.database(database, TEMPLATE):
        pack.furnish(task, database)
        app = pack.cluster.connect(pack.roles.app, database)
        store = TicketStore(app, fault)
        form = {
            "customer_id": params["customer_id"],
            "name": params["customer_name"],
            "subject": params["subject"],
            "priority": params["priority"],
            "description": params["description"],
            "request_ref": params["idempotency_key"],
            "credit": task.kind == "credit",
            "sla_code": params.get("sla_code"),
            "credit_ref": params.get("credit_ref"),
        }
        reply = store.create(form)
        store.close()
        with pack.cluster.connect(pack.cluster.admin, database) as conn:
            tickets = conn.execute(
                "SELECT customer_id, description, priority FROM tickets WHERE subject = %s "
                "AND id >= 1000",
                (params["subject"],),
            ).fetchall()
            credits = conn.execute(
                "SELECT customer_id FROM credits WHERE credit_ref = %s",
                (params.get("credit_ref", ""),),
            ).fetchall()
    return {"reply": reply, "tickets": tickets, "credits": credits}


@pytest.mark.slow
def test_the_drawn_fault_parameters_act_at_the_save_path(
    pack: GeneratedTicketingProvider,
) -> None:
    task = next(t for t in dev() if t.template == "clean_credit" and t.priority != "normal")
    code, tag = task.customer.code, trial_tag(task.task_id, 0)
    clean = _saved(pack, task, Fault())
    assert [r[0] for r in clean["tickets"]] == [code] and clean["credits"] == [(code,)]
    assert clean["tickets"][0][1].endswith(tag)
    no_priority = _saved(pack, task, Fault("partial", dropped="priority"))
    assert no_priority["tickets"] == [(code, task.params(0)["description"], "normal")]
    no_credit = _saved(pack, task, Fault("partial", dropped="credit"))
    assert len(no_credit["tickets"]) == 1 and no_credit["credits"] == []
    three = _saved(pack, task, Fault("duplicate", copies=3))
    assert len(three["tickets"]) == 3 and len(three["credits"]) == 3
    credited = _saved(pack, task, Fault("double_credit", copies=3))
    assert len(credited["tickets"]) == 1 and len(credited["credits"]) == 3
    cited = _saved(pack, task, Fault("validation", rejection="account is on a billing hold"))
    assert cited["reply"].banner.endswith("account is on a billing hold") and not cited["tickets"]
    closed = next(t for t in dev() if t.template == "homonym_closed")
    landed = _saved(pack, closed, closed.fault)["tickets"]
    homonym = next(c for c in closed.world.customers if c[5] == "closed")
    assert [r[0] for r in landed] == [homonym[0]]  # the closed account the search hides


@pytest.mark.slow
def test_a_wrong_row_reassignment_lands_where_its_offset_says(
    pack: GeneratedTicketingProvider,
) -> None:
    for task in [t for t in dev() if t.template == "wrong_ticket_reassign"][:4]:
        assert task.ticket_id is not None
        landed = task.ticket_id + task.fault.row_offset
        assert landed in {int(r[0]) for r in task.world.tickets}
        api = next(t for t in pack.tasks() if t.task_id == task.task_id)
        assert f"lands {task.fault.row_offset:+d} ticket" in pack.mechanism(api)
        database = "ep_generated_test"
        with pack.cluster.database(database, TEMPLATE):
            pack.furnish(task, database)
            store = TicketStore(pack.cluster.connect(pack.roles.app, database), task.fault)
            store.reassign(task.ticket_id, {"assignee_id": "A-04", "comment": "handover"})
            store.close()
            with pack.cluster.connect(pack.cluster.admin, database) as conn:
                moved = conn.execute("SELECT id FROM tickets WHERE assignee_id = 'A-04' AND "
                                     "id = %s", (landed,)).fetchall()  # fmt: skip
        assert moved == [(landed,)], task.name


@pytest.fixture(scope="module")
def rows(pack: GeneratedTicketingProvider) -> dict[str, list[Any]]:
    """About 6 min on a loaded 2-core machine: 296 tasks x 3 arms on the api substrate."""
    tasks = [t for t in pack.tasks() if t.substrate is Substrate.API and t.split is Split.DEV]
    runs = {arm: evaluate(get_baseline(arm, pack), pack, trials=1, tasks=tasks) for arm in ARMS}
    assert not any(r.dropped for r in runs.values())
    return {arm: list(r.rows) for arm, r in runs.items()}


def swer(rows: list[Any]) -> float:
    return float(sum(r.outcome.value == SWER for r in rows) / len(rows))


@pytest.mark.slow
def test_the_ladder_holds_on_every_generated_dev_task(rows: dict[str, list[Any]]) -> None:
    """Overall strictly; within each category none of the three rungs is above the one before
    (effect_verified_all misses the C4 lost updates as on the written tasks: its readback's
    baseline is taken before the colleague commits, docs/ticketing.md)."""
    rates = {arm: swer(rows[arm]) for arm in ARMS}
    assert rates["screen_only"] > rates["effect_verified"] > rates["effect_verified_all"]
    for category in Category:
        per = {arm: swer([r for r in rows[arm] if r.category is category]) for arm in ARMS}
        assert per["effect_verified_all"] <= per["effect_verified"] <= per["screen_only"], per
        if category is not Category.C4_STALE_OVERWRITE:
            assert per["effect_verified_all"] == 0.0, (category.value, per)
        if category is not Category.CONTROL:
            assert per["screen_only"] > per["effect_verified_all"], (category.value, per)


@pytest.mark.slow
def test_the_documented_ladder_is_measured(rows: dict[str, list[Any]]) -> None:
    """docs/generated-tasks.md states the SWER per arm and category this measures."""
    doc = (ROOT / "docs" / "generated-tasks.md").read_text()
    cells: list[tuple[str, Category | None]] = [("all", None)]
    cells += [(c.value.split("_")[0], c) for c in Category]
    for label, category in cells:
        mine = {arm: [r for r in rows[arm] if category in (None, r.category)] for arm in ARMS}
        rates = " | ".join(f"{swer(mine[arm]):.3f}" for arm in ARMS)
        line = f"| {label} | {len(mine['screen_only'])} | {rates} |"
        assert line in doc, line


@pytest.mark.slow
def test_the_documented_minimum_detectable_differences_are_measured(
    pack: GeneratedTicketingProvider, rows: dict[str, list[Any]]
) -> None:
    """docs/generated-tasks.md states the figures this measures from the rows."""
    doc = (ROOT / "docs" / "generated-tasks.md").read_text()
    lines = [
        f"| ticketing-generated | {arm} | {level} | {clusters} | {points:.1f} |"
        for arm in ("screen_only", "effect_verified")
        for level, (clusters, points) in mdd_by_level(pack, rows[arm]).items()
    ]
    missing = [line for line in lines if line not in doc]
    assert not missing, missing
