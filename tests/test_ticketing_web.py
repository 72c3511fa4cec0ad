"""The ticketing pack on the web substrate, in real headless Chromium (Debian's /usr/bin/chromium).

A lean set (a task of every fault category, controls and a refusal control; one shared
browser): the pixel baselines get the outcomes the design predicts on the web variants (the API
ladder), the screen shows a green banner while the oracle refutes the record on every fault
category, nothing the agent's env returns leads to the page, the DOM, the database or the
oracle, a killed browser is an ``infrastructure`` drop, and the layout the bots recorded is the
layout the browser draws.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import pytest
from effectbench_ticketing import TicketingProvider
from effectbench_ticketing.oracle import PostgresOracle
from effectbench_ticketing.web import layout
from effectbench_ticketing.web.app import stylesheet
from support.handles import spec_of
from support.ticketing import ARMS, PREDICTED, SWER, everything, short

from effectbench.api import (
    AgentReport,
    AgentTask,
    Category,
    ComputerEnv,
    DropReason,
    Substrate,
    TaskSpec,
    browser_pids,
    close_browser,
    dominant_colour,
    evaluate,
    get_baseline,
    pages,
    pixels,
    screenshot_size,
)
from effectbench.screens.browser import shared_browser

LEAN = (
    "clean_open",
    "reassign_ticket",
    "refusal_ambiguous",
    "partial_description",
    "duplicate_submit",
    "optimistic_rollback",
    "stale_priority",
    "stale_contact",
    "double_credit",
    "homonym_domain",
    "credit_wrong_customer",
    "noop_reassign",
)
"""Controls, a refusal control and at least one task of every fault category C1-C7."""

pytestmark = [pytest.mark.web, pytest.mark.postgres]


@pytest.fixture(scope="module")
def pack() -> Iterator[TicketingProvider]:
    provider = TicketingProvider()
    yield provider
    provider.close()
    close_browser()


def _web(pack: TicketingProvider, names: tuple[str, ...] = LEAN) -> list[TaskSpec]:
    wanted = {f"ticketing::{n}@web" for n in names}
    return [t for t in pack.tasks() if t.task_id in wanted]


class _Watched:
    """screen_only, keeping the last screenshot of each episode (what a person would see)."""

    name = "screen_only"
    shots: dict[str, bytes] = {}

    def __init__(self, pack: TicketingProvider) -> None:
        self._inner = get_baseline("screen_only", pack)
        self._pack = pack

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> Any:
        report = self._inner.run(task, env, params)
        self.shots[spec_of(task, self._pack.tasks()).task_id] = env.screenshot()
        return report


@pytest.fixture(scope="module")
def runs(pack: TicketingProvider) -> dict[str, Any]:
    tasks = _web(pack)
    out = {
        arm: evaluate(get_baseline(arm, pack), pack, trials=1, tasks=tasks)
        for arm in ARMS
        if arm != "screen_only"
    }
    out["screen_only"] = evaluate(_Watched(pack), pack, trials=1, tasks=tasks)
    return out


def test_each_task_is_a_variant_per_substrate(pack: TicketingProvider) -> None:
    by_id = {t.task_id: t for t in pack.tasks()}
    api, web = by_id["ticketing::stale_contact"], by_id["ticketing::stale_contact@web"]
    assert (api.substrate, web.substrate) == (Substrate.API, Substrate.WEB)
    assert api.expected_effect == web.expected_effect and api.category == web.category
    assert pack.trial_params(api, 3) == pack.trial_params(web, 3)


@pytest.mark.parametrize("arm", ARMS)
def test_pixel_baselines_get_the_predicted_outcomes_on_the_web(
    runs: dict[str, Any], arm: str
) -> None:
    run = runs[arm]
    assert not run.dropped
    got = {short(r.task_id): r.outcome.value for r in run.rows}
    assert got == {name: PREDICTED[name][ARMS.index(arm)] for name in LEAN}
    assert {r.substrate for r in run.rows} == {Substrate.WEB}
    assert all(r.env_fingerprint["viewport"] == "1024x640" for r in run.rows)


def test_a_green_banner_while_the_oracle_refutes_every_fault_category(
    runs: dict[str, Any],
) -> None:
    seen = set()
    for row in runs["screen_only"].rows:
        if row.category is Category.CONTROL:
            continue
        shot = _Watched.shots[row.task_id]
        assert screenshot_size(shot) == (1024, 640)
        assert pixels.banner_status(shot) == "success", row.task_id
        assert dominant_colour(shot, pages.BANNER.region()) == pages.BANNER_RGB["success"]
        assert row.outcome.value == SWER and row.oracle.verdict.value == "refuted"
        seen.add(row.category)
    assert seen == set(Category) - {Category.CONTROL}


_FORBIDDEN = ("playwright", "psycopg", "greenlet", "effectbench_ticketing.cluster")


def test_nothing_the_env_returns_reaches_the_page_the_database_or_the_oracle(
    pack: TicketingProvider,
) -> None:
    task = _web(pack, ("clean_open",))[0]
    with pack.provision(task, 0, pack.trial_params(task, 0)) as episode:
        env = episode.env
        assert isinstance(env, ComputerEnv)
        calls: Any = env
        returned: list[object] = [
            calls.screenshot(),
            calls.click(10, 10),
            calls.move(20, 20),
            calls.type("x"),
            calls.key("Escape"),
            calls.scroll(5, 5, 0, 1),
            calls.cursor_position(),
            calls.product_effect_verifier(),
            calls.all_surfaces_verifier(),
            env.display,
        ]
        for value in everything(returned):
            module = type(value).__module__
            assert not module.startswith(_FORBIDDEN), module
            assert value is not episode.oracle and not isinstance(value, PostgresOracle)
            if isinstance(value, str):
                assert pack.roles.oracle.password not in value


def test_a_killed_browser_is_an_infrastructure_drop_never_a_halt(pack: TicketingProvider) -> None:
    from effectbench.api import get_baseline as baseline

    task = _web(pack, ("clean_open",))[0]
    attempts: list[str] = []

    class Killer:
        """Kills the browser, then goes on as screen_only would (and claims success)."""

        name = "killer"

        def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
            attempts.append(task.handle)
            for pid in browser_pids():
                os.kill(pid, signal.SIGKILL)
            baseline("screen_only", pack).run(task, env, params)
            return AgentReport(reported_success=True, halted=False, message="claimed")

    run = evaluate(Killer(), pack, trials=1, tasks=[task])
    assert run.rows == [] and len(attempts) == 2
    (drop,) = run.dropped
    assert drop.reason is DropReason.INFRASTRUCTURE and "browser" in drop.detail
    after = evaluate(baseline("screen_only", pack), pack, trials=1, tasks=[task])
    assert [r.outcome.value for r in after.rows] == ["success"]


def _goto(url: str) -> Callable[[Any], Awaitable[Any]]:
    return lambda page: page.goto(url)


def _bounding_box(selector: str) -> Callable[[Any], Awaitable[Any]]:
    return lambda page: page.locator(selector).bounding_box()


def test_the_recorded_layout_is_what_the_browser_draws(pack: TicketingProvider) -> None:
    css = stylesheet()
    for box in (layout.SEARCH_NAME, layout.SUBJECT, layout.SAVE, layout.COMMENT, pages.BANNER):
        assert f"left:{box.x}px;top:{box.y}px;width:{box.w}px;height:{box.h}px" in css
    task = _web(pack, ("clean_open",))[0]
    with pack.provision(task, 0, pack.trial_params(task, 0)):
        channel = pack.service.channel
        assert channel is not None
        # The harness's own browser session (the agent never gets one): its page runs on the
        # browser's loop thread, so each read is a call made there.
        page = shared_browser().open(pages.VIEWPORT, channel.entry_url())
        try:
            for path, boxes in (
                ("/", {"#q-name": layout.SEARCH_NAME, "#open-id": layout.OPEN_TICKET_ID}),
                (
                    "/account/C-1001",
                    {
                        "#subject": layout.SUBJECT,
                        "#description": layout.DESCRIPTION,
                        "#priority-urgent": layout.PRIORITY_RADIO["urgent"],
                        "#priority-low": layout.PRIORITY_RADIO["low"],
                        "#sla-SLA-24H": layout.SLA_RADIO["SLA-24H"],
                        "#credit-ref": layout.CREDIT_REF,
                        "#save": layout.SAVE,
                    },
                ),
                (
                    "/ticket?id=501",
                    {"#assignee-A-04": layout.ASSIGNEE_RADIO["A-04"], "#comment": layout.COMMENT},
                ),
            ):
                page.call(_goto(f"http://{channel.host}{path}"))
                for selector, box in boxes.items():
                    got = page.call(_bounding_box(selector))
                    assert got is not None, selector
                    assert (got["x"], got["y"], got["width"], got["height"]) == tuple(box), selector
        finally:
            page.close()
