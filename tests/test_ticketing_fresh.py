"""Fresh instances of the generated ticketing catalogue: drawn from a submission seed, disjoint
from every other seed's, served on PostgreSQL and held to the seed by the verifier.

The verifier's tests run a pack of five of the catalogue's tasks (one each of five templates
that cover the three shapes, a confusable code, a colleague's write and a misrouted credit),
registered under a name of its own, so that the public pack, the submitter's instance and the
verifier's (each with its own PostgreSQL cluster and audit) take seconds, not the minutes of
296 worlds; the provider, the generator, the cluster and the verifier are the real ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from effectbench_ticketing import db
from effectbench_ticketing.generated import (
    CATALOGUE,
    DEV_COUNTS,
    DEV_SEED,
    HANDOVER,
    ID_CLEARANCE,
    GeneratedTask,
)
from effectbench_ticketing.generated_pack import GeneratedTicketingProvider
from sigstore_testroot import GOOGLE, SigstoreTestInstance, shared_instance
from support.bundles import copy_bundle, read_receipts, read_rows, write_receipts
from support.generated import pooled

from effectbench.bundle import InstanceDecl, SignerDecl, SystemInfo
from effectbench.cli._run import instance_of
from effectbench.hashing import instance_mark
from effectbench.kit.catalogue import InstanceMark
from effectbench.kit.generate import Draw, category_counts, generate, instance_catalogue_seed
from effectbench.packs import register
from effectbench.produce import make_submission, now
from effectbench.produce import write_submission as write_bundle
from effectbench.run import run
from effectbench.schema import Split, Substrate
from effectbench.seam import DrawsInstances
from effectbench.signatures import sign_bundle
from effectbench.site._entries import instance_kind
from verifier.api import VerifyOptions, verify_bundle
from verifier.report import BundleReport, Status

pytestmark = pytest.mark.postgres

SEEDS = ("submission-a", "submission-b")
ALICE = "alice@example.org"
FEW = "ticketing-generated-five"
"""The registered name of the five-task pack the verifier's tests run."""
FEW_TEMPLATES = (
    "clean_credit",
    "clean_reassign",
    "homonym_code",
    "stale_account",
    "credit_wrong_customer",
)


def _values(task: GeneratedTask) -> dict[str, set[Any]]:
    """Every payload value of ``task`` by kind: what two seeds' instances must not share."""
    w, params = task.world, task.params(0)
    return {
        "task id": {task.task_id},
        "name": {task.customer.name} | {c[1] for c in w.customers},
        "domain": {task.customer.domain}
        | {c[2] for c in w.customers}
        | {c[4] for c in w.customers},
        "identifier": ({task.customer.code} - {""})
        | {c[0] for c in w.customers}
        | {t[0] for t in w.tickets}
        | {c[0] for c in w.comments}
        | {c[0] for c in w.credits}
        | {c[4] for c in w.credits}
        | ({task.ticket_id} if task.ticket_id is not None else set()),
        "text": {task.description, params.get("description"), params.get("comment")} - {None}
        | {t[3] for t in w.tickets}
        | {c[3] for c in w.comments},
        "amount": {c[5] for c in w.credits},
    }


def test_two_seeds_give_disjoint_payloads_on_every_task() -> None:
    """Task by task over the whole dev split's size, and pooled over the instance: no task id,
    company name, domain, identifier, text or amount of one seed's instance is another's, nor
    the public split's; every one carries its seed's mark."""
    a, b = (CATALOGUE.instance_split(s) for s in SEEDS)
    public = CATALOGUE.dev_split()
    assert len(a) == len(b) == len(public) == sum(DEV_COUNTS.values())
    for x, y, z in zip(a, b, public, strict=True):
        assert x.template == y.template == z.template
        vx, vy, vz = _values(x), _values(y), _values(z)
        for kind in vx:
            assert vx[kind].isdisjoint(vy[kind]), (x.name, y.name, kind)
            assert vx[kind].isdisjoint(vz[kind]), (x.name, z.name, kind)
    pa, pb, pp = (pooled(x, _values) for x in (a, b, public))
    for kind in pa:
        assert pa[kind].isdisjoint(pb[kind]) and pa[kind].isdisjoint(pp[kind]), kind
    mark = InstanceMark.of(instance_mark(SEEDS[0]))
    assert mark is not None
    for t in a:
        assert all(mark.tag in text for text in _values(t)["text"]), t.name
        assert all(c[1].endswith(f" {mark.word}") for c in t.world.customers), t.name
        assert all(c[0].endswith(mark.digits) for c in t.world.customers), t.name
        assert min(r[0] for r in t.world.tickets) > ID_CLEARANCE + mark.ids, t.name
        params = t.params(1)
        assert mark.tag in params.get("description", params.get("comment", "")), t.name
    reassign = next(t for t in a if t.kind == "reassign")
    assert reassign.params(0)["comment"].startswith(f"{HANDOVER} {mark.tag} ")


def test_an_instance_is_the_same_templates_and_generator_drawn_from_the_seed() -> None:
    """Same templates, counts and categories, each fresh task paired with the public task of
    its template and index; the situations vary within a template as on the public split,
    and the faults' invariants hold on the marked worlds."""
    fresh, public = CATALOGUE.instance_split(SEEDS[0]), CATALOGUE.dev_split()
    assert CATALOGUE.instance_split(SEEDS[0]) is fresh  # drawn once per process
    again = generate(CATALOGUE.templates, DEV_COUNTS, instance_catalogue_seed(SEEDS[0]), Split.DEV)
    assert again == fresh
    assert category_counts(fresh) == category_counts(public)
    assert [t.template for t in fresh] == [t.template for t in public]
    slots = CATALOGUE.instance_slots(SEEDS[0])
    assert [slots[t.task_id] for t in fresh] == [t.task_id for t in public]
    dropped = {t.situation()["fault"]["dropped"] for t in fresh if t.template == "partial_credit"}
    assert dropped == {"description", "priority", "credit"}
    for t in fresh:
        if t.template == "homonym_code":  # the requester's code without its leading zero
            codes = {c[0] for c in t.world.customers if c[1] == t.customer.name}
            assert codes == {t.customer.code, t.customer.code.replace("C-0", "C-", 1)}
        if t.template in ("homonym_domain", "homonym_closed"):  # a lookup by name lands on it
            same = [c for c in t.world.customers if c[1] == t.customer.name]
            assert min(c[0] for c in same) != t.customer.code, t.name
        if t.template == "wrong_ticket_reassign":
            assert t.ticket_id is not None
            assert t.ticket_id + t.fault.row_offset in {r[0] for r in t.world.tickets}


def test_a_requester_code_at_the_end_of_its_range_still_gets_a_homonym_before_it() -> None:
    """Seed ``bench-3`` draws a C6 requester with the lowest leading-zero code (``C-0200``): its
    same-name account takes a code just below the range, so a lookup by name still lands on
    it (the template raised on such a draw, which no public or sequestered seed had made)."""
    tasks = CATALOGUE.instance_split("bench-3")
    mark = InstanceMark.of(instance_mark("bench-3"))
    assert mark is not None
    edge = [t for t in tasks if t.customer.code == f"C-0200{mark.digits}"]
    assert [t.template for t in edge] == ["homonym_closed"]
    same = sorted(c[0] for c in edge[0].world.customers if c[1] == edge[0].customer.name)
    assert len(same) == 2 and same[1] == edge[0].customer.code


def test_the_public_split_is_unmarked() -> None:
    assert CATALOGUE.instance_split(DEV_SEED) is CATALOGUE.dev_split()
    assert Draw(DEV_SEED, "clean_open", 0).mark is None
    for t in CATALOGUE.dev_split():
        assert "(ref " not in json.dumps([t.description, t.world.tables()]), t.name
        assert t.handover == HANDOVER


# -- the provider and the verifier on five tasks -----------------------------------------------


class FiveTasks(GeneratedTicketingProvider):
    """The generated ticketing pack over the first task of each of :data:`FEW_TEMPLATES` of its
    instance's dev split (its audit and manifest too), on the API."""

    name = FEW

    def definitions(self) -> Sequence[GeneratedTask]:
        return tuple(next(t for t in self.dev() if t.template == n) for n in FEW_TEMPLATES)

    def definitions_on(self, substrate: Substrate) -> Sequence[GeneratedTask]:
        return self.definitions() if substrate is Substrate.API else ()


@dataclass(frozen=True)
class Made:
    """The module's fresh bundle, and what the submitter's provider said of its instance."""

    bundle: Path
    seed: str
    tasks: tuple[str, ...]
    seeds: tuple[str, str]
    """The provider's (public_seed, instance_seed)."""
    manifest_seed: str
    audited: bool
    """Whether every task of the instance passed its live audit (each on its own world)."""
    customers: list[str]
    """The customer ids the first task's episode database held (read back from PostgreSQL)."""
    instance: SigstoreTestInstance


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Made]:
    """A fresh-instance bundle (no commitment) of the five tasks, 3 trials, signed by the
    private Sigstore instance; made as ``effectbench submit --instance-seed`` makes it."""
    instance = shared_instance()
    seed = SEEDS[0]
    with register(FEW, FiveTasks):
        pack = instance_of(FEW, seed)
        assert isinstance(pack, FiveTasks) and isinstance(pack, DrawsInstances)
        try:
            started = now()
            result = run(pack, baseline="effect_verified", trials=3).result
            submission = make_submission(
                result,
                pack,
                SystemInfo(name="Fresh ticketing checker"),
                trials=3,
                split=Split.DEV,
                started_at=started,
                finished_at=now(),
                signer=SignerDecl(identity=ALICE, issuer=GOOGLE),
                instances=InstanceDecl(seed=seed),
            )
            bundle = write_bundle(tmp_path_factory.mktemp("fresh"), submission, result.rows)
            _sign(bundle, instance)
            first = pack.definitions()[0]
            database = "ep_fresh_test"
            with pack.cluster.database(database, "tpl"):
                pack.furnish(first, database)
                with pack.cluster.connect(pack.cluster.admin, database) as conn:
                    ids = [r[0] for r in conn.execute("SELECT id FROM customers ORDER BY id")]
            made = Made(
                bundle,
                seed,
                tuple(t.task_id for t in pack.tasks()),
                (pack.public_seed, pack.instance_seed),
                pack.manifest()["generation"]["dev"]["seed"],
                all(t.oracle.adversarially_audited for t in pack.tasks()),
                ids,
                instance,
            )
        finally:
            pack.close()
    yield made


def _sign(bundle: Path, instance: SigstoreTestInstance) -> None:
    sign_bundle(
        bundle, identity_token=instance.email_token(ALICE), trust_config=instance.trust_config_path
    )


def _verify(made: Made, bundle: Path) -> BundleReport:
    with register(FEW, FiveTasks):
        return verify_bundle(bundle, VerifyOptions(trust_config=made.instance.trust_config_path))


def test_the_provider_serves_the_instance_its_seed_draws(made: Made) -> None:
    """The tasks are the instance's, each audited on its own world; the manifest names the
    seed; an episode's PostgreSQL clone holds the task's marked accounts beside the desk's."""
    fresh = CATALOGUE.instance_split(made.seed)
    assert made.seeds == (DEV_SEED, made.seed) and made.manifest_seed == made.seed
    assert made.audited
    assert set(made.tasks) <= {t.task_id for t in fresh}
    assert set(made.tasks).isdisjoint(t.task_id for t in CATALOGUE.dev_split())
    mark = InstanceMark.of(instance_mark(made.seed))
    assert mark is not None
    world = next(t for t in fresh if t.task_id == made.tasks[0]).world
    held = [c for c in made.customers if c.endswith(mark.digits)]
    assert sorted(held) == sorted(c[0] for c in world.customers)
    assert len(made.customers) == len(held) + len(db.CUSTOMERS)  # and the desk's seed accounts


def test_a_fresh_bundle_verifies_and_is_flagged_fresh_uncommitted(made: Made) -> None:
    report = _verify(made, made.bundle)
    assert report.status is Status.RANKED, report.finding_ids()
    assert report.instance_seed == made.seed
    assert (report.public_seed, report.instance_committed) == (False, False)
    assert instance_kind(report.public_seed, report.instance_committed) == "fresh-uncommitted"
    assert {r["task_id"] for r in read_rows(made.bundle)} == set(made.tasks)
    manifest = json.loads((made.bundle / "submission.json").read_text())["pack"]
    assert manifest["name"] == FEW


def test_a_payload_not_drawn_from_the_seed_is_refused(made: Made, tmp_path: Path) -> None:
    """One receipt whose effect readings carry another seed's mark (its description or
    handover comment): the row's task is the seed's, its payload is not."""
    mine, theirs = instance_mark(made.seed)[27:39], instance_mark(SEEDS[1])[27:39]
    bundle = copy_bundle(made.bundle, tmp_path / "b")
    (bundle / "submission.sigstore.json").unlink()
    receipts = read_receipts(bundle)
    i = next(i for i, r in enumerate(receipts) if mine in json.dumps(r["effects"]))
    receipts[i]["effects"] = json.loads(json.dumps(receipts[i]["effects"]).replace(mine, theirs))
    write_receipts(bundle, receipts)
    _sign(bundle, made.instance)
    report = _verify(made, bundle)
    assert report.status is Status.REFUSED, report.finding_ids()
    assert "pack.instance_payload" in report.finding_ids(), report.finding_ids()
    said = " ".join(
        f.message for c in report.checks for f in c.findings if f.check == "pack.instance_payload"
    )
    assert "not drawn from the bundle's instance seed" in said
    assert f"--pack {FEW} --instance-seed '{made.seed}'" in said
