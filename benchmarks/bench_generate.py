"""Benchmark a generated catalogue: drawing a task, building its world, one API episode.

Prints figures, asserts nothing, the load average beside each:

* drawing one task from its template and seed (``generate`` of one task per template, so
  every template is timed), and drawing the whole dev split;
* building a task's world: the clinic's world file (its seed database) the first time a
  process needs it; the ticketing pack's clone of the template database with the task's rows
  added (what every episode does);
* one API episode of a generated task (provision its world, act over HTTP, the oracle's
  audit), per reference arm;
* a fresh instance: drawing the whole dev split from a submission seed (marked payloads);
  for the ticketing pack also building the provider of that instance (its own PostgreSQL
  cluster and the audit of every fresh world: what ``submit --instance-seed`` and the verifier
  pay before the first episode); for the clinic, verifying one beacon round's BLS signature
  (``py_ecc``, pure Python).

    .venv/bin/python benchmarks/bench_generate.py [--pack clinic|ticketing] [--tasks 60] [--quick]

``--pack`` picks the catalogue (``clinic-generated``, the default, or ``ticketing-generated``,
which starts the ticketing pack's PostgreSQL cluster). ``--quick`` times 5 tasks and builds
the pack's audit over them only (seconds), for a smoke test; the default times 60 episodes per
arm over the whole dev split's pack (its audit first: minutes for the ticketing pack).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

from effectbench.baselines import get_baseline
from effectbench.instances import Beacon, BeaconChain, beacon_problem
from effectbench.kit.catalogue import Catalogue
from effectbench.kit.generate import generate, instance_catalogue_seed
from effectbench.packs.clinic.generated import (
    CATALOGUE,
    TEMPLATES,
    GeneratedTask,
    World,
    dev_split,
)
from effectbench.packs.clinic.generated_pack import GeneratedClinicProvider, WorldTemplate
from effectbench.run.runner import run_episode
from effectbench.schema import Split, Substrate

ARMS = ("screen_only", "effect_verified", "effect_verified_all")


def _load() -> str:
    return f"[load average {os.getloadavg()[0]:.1f}]"


def _ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return f"median {statistics.median(values) * 1000:7.3f} ms  p95 {p95 * 1000:7.3f} ms  {_load()}"


class _Few(GeneratedClinicProvider):
    """The pack over the first ``n`` dev tasks only (its audit too): the quick run."""

    few: tuple[GeneratedTask, ...] = ()

    def definitions(self) -> Sequence[GeneratedTask]:
        return self.few

    def definitions_on(self, substrate: Substrate) -> Sequence[GeneratedTask]:
        return self.few if substrate is Substrate.API else ()


def draws(rounds: int, catalogue: Catalogue[Any] = CATALOGUE) -> None:
    """Time drawing one task of each template, and the whole dev split."""
    one: list[float] = []
    templates = catalogue.templates
    for index in range(rounds):
        for template in templates:
            t0 = time.perf_counter()
            generate([template], {template.name: 1}, f"bench-{index}", Split.DEV)
            one.append(time.perf_counter() - t0)
    print(f"draw one task ({len(one)} draws over {len(templates)} templates): {_ms(one)}")
    t0 = time.perf_counter()
    tasks = generate(templates, catalogue.dev_counts, catalogue.dev_seed, Split.DEV)
    took = time.perf_counter() - t0
    print(f"draw the dev split ({len(tasks)} tasks): {took * 1000:.1f} ms  {_load()}")


def fresh(rounds: int, catalogue: Catalogue[Any] = CATALOGUE) -> None:
    """Time drawing a fresh instance of the dev split (a new submission seed each round)."""
    took: list[float] = []
    for index in range(rounds):
        t0 = time.perf_counter()
        seed = instance_catalogue_seed(f"bench-{index}")
        tasks = generate(catalogue.templates, catalogue.dev_counts, seed, Split.DEV)
        took.append(time.perf_counter() - t0)
    print(f"draw a fresh instance of the dev split ({len(tasks)} tasks, {rounds} seeds): "
          f"{_ms(took)}")  # fmt: skip


QUICKNET_ROUND_3 = (
    "b3fab6df720b68cc47175f2c777e86d84187caab5770906f515ff1099"
    "cb01e4deaa027075d860823e49477b93c72bd64"
)
"""drand quicknet's published signature of round 3."""


def beacon() -> None:
    """Time verifying one real quicknet round under the pinned chain (BLS on G1, RFC 9380)."""
    from verifier.commitment import PINNED_CHAIN

    chain = BeaconChain.from_file(PINNED_CHAIN)
    signature = bytes.fromhex(QUICKNET_ROUND_3)
    beacon = Beacon(chain.chain_hash, 3, signature.hex(), hashlib.sha256(signature).hexdigest())
    t0 = time.perf_counter()
    problem = beacon_problem(beacon, chain)
    took_one = time.perf_counter() - t0
    print(
        f"verify one quicknet round (BLS12-381 on G1, {problem or 'valid'}): {took_one:.2f} s  "
        f"{_load()}"
    )


def worlds(tasks: Sequence[GeneratedTask]) -> None:
    """Time building a world's seed file (a fresh template object, so it is built anew)."""
    built: list[float] = []
    for task in tasks:
        template = WorldTemplate(
            World(task.world.patients, task.world.encounters, task.world.billing)
        )
        t0 = time.perf_counter()
        template.path()
        built.append(time.perf_counter() - t0)
    print(f"build one task's world file ({len(built)} worlds): {_ms(built)}")


def episodes(pack: Any, n: int) -> None:
    """Time one API episode (the runner's whole episode) of ``n`` tasks per arm."""
    tasks = [t for t in pack.tasks() if t.substrate is Substrate.API][:n]
    for task in tasks if isinstance(pack, GeneratedClinicProvider) else ():
        pack.initial_tables(task, {})  # each world's file is built before timing (its figure)
    for arm in ARMS:
        sut = get_baseline(arm, pack)
        times: list[float] = []
        for task in tasks:
            t0 = time.perf_counter()
            run_episode(sut, pack, task, 0, 0)
            times.append(time.perf_counter() - t0)
        print(f"one api episode, {arm} ({len(times)} tasks): {_ms(times)}")


def ticketing(n: int, quick: bool) -> None:
    """The ticketing catalogue: draws, a world (clone and furnish), episodes per arm."""
    from effectbench_ticketing.db import TEMPLATE
    from effectbench_ticketing.generated import CATALOGUE as TICKETING
    from effectbench_ticketing.generated_pack import GeneratedTicketingProvider

    tasks = TICKETING.dev_split()
    print(f"ticketing-generated: {len(tasks)} dev tasks, {len(TICKETING.templates)} templates "
          f"{_load()}")  # fmt: skip
    draws(1 if quick else 20, TICKETING)
    fresh(1 if quick else 5, TICKETING)

    class Few(GeneratedTicketingProvider):
        def definitions(self) -> Sequence[Any]:
            return self.dev()[:n]

    t0 = time.perf_counter()
    pack = Few() if quick else GeneratedTicketingProvider()
    count = len(pack.definitions())
    print(f"build the pack and audit {count} tasks: {time.perf_counter() - t0:.2f} s  {_load()}")
    t0 = time.perf_counter()
    with pack.instantiate("bench-fresh-instance") as instance:
        count = len(instance.definitions())
        took = time.perf_counter() - t0
    print(f"build a fresh instance's pack (its cluster) and audit its {count} tasks: "
          f"{took:.2f} s  {_load()}")  # fmt: skip
    with pack:
        built: list[float] = []
        for number, task in enumerate(tasks[:n]):
            t0 = time.perf_counter()
            with pack.cluster.database(f"bench_world_{number}", TEMPLATE) as database:
                pack.furnish(task, database)
                built.append(time.perf_counter() - t0)
        print(f"clone the template and add one task's world ({len(built)} worlds): {_ms(built)}")
        episodes(pack, n)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--pack",
        choices=("clinic", "ticketing"),
        default="clinic",
        help="the generated catalogue to time (default clinic)",
    )
    parser.add_argument("--tasks", type=int, default=60, help="episodes per arm (default 60)")
    parser.add_argument(
        "--quick", action="store_true", help="5 tasks, the pack over them only: seconds"
    )
    args = parser.parse_args(argv)
    n = 5 if args.quick else max(1, args.tasks)
    if args.pack == "ticketing":
        ticketing(n, args.quick)
        return 0
    print(f"clinic-generated: {len(dev_split())} dev tasks, {len(TEMPLATES)} templates {_load()}")
    draws(1 if args.quick else 20)
    fresh(1 if args.quick else 5)
    beacon()
    worlds(dev_split()[:n])
    t0 = time.perf_counter()
    if args.quick:
        _Few.few = dev_split()[:n]
        pack: GeneratedClinicProvider = _Few()
    else:
        pack = GeneratedClinicProvider()
    count = len(pack.definitions())
    print(f"build the pack and audit {count} tasks: {time.perf_counter() - t0:.2f} s  {_load()}")
    with pack:
        episodes(pack, n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
