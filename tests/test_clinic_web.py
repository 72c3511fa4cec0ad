"""The clinic on the web substrate, in real headless Chromium (Debian's /usr/bin/chromium).

A lean set (a few episodes per fault category, one shared browser): the pixel
baselines get the outcomes the design predicts on the web variants (the same
ladder as on the API level) and reproduce row for row; the screen shows a green
banner while the oracle refutes the record on every fault category; nothing the
agent's env returns leads to the page, the DOM or the oracle; a killed browser
becomes an ``infrastructure`` drop; the layout the bots recorded is the layout
the browser draws.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright
from support.browser import served
from support.clinic import ARMS, PREDICTED, SWER
from support.handles import spec_of
from support.screens import left_since, processes_now

from effectbench.baselines import ScreenOnly, get_baseline
from effectbench.cli import main
from effectbench.computer import ComputerEnv, images
from effectbench.kit.pages import BANNER_RGB
from effectbench.packs.clinic import ClinicProvider
from effectbench.packs.clinic.oracle import SqliteOracle
from effectbench.packs.clinic.web import layout
from effectbench.packs.clinic.web.pixels import banner_status
from effectbench.run.runner import DroppedEpisode, evaluate, run_episode
from effectbench.schema import AgentReport, Category, DropReason, Substrate, TaskSpec
from effectbench.screens._supervisor import command_line
from effectbench.screens.browser import chromium_pids, shared_browser
from effectbench.seam import AgentTask

LEAN = (
    "clean_draft",
    "sign_and_bill",
    "edit_note",
    "refusal_stale",
    "partial_note",
    "duplicate_submit",
    "optimistic_rollback",
    "stale_allergies",
    "double_charge",
    "homonym_dob",
    "charge_wrong_patient",
    "noop_edit",
)
"""Controls, a refusal control and at least one task of every fault category C1-C7."""

pytestmark = pytest.mark.web


@pytest.fixture(scope="module")
def pack() -> Iterator[ClinicProvider]:
    provider = ClinicProvider()
    yield provider
    provider.close()
    shared_browser().close()


def _web(pack: ClinicProvider, names: tuple[str, ...] = LEAN) -> list[TaskSpec]:
    wanted = {f"clinic::{n}@web" for n in names}
    return [t for t in pack.tasks() if t.task_id in wanted]


class ScreenOnlyWatched(ScreenOnly):
    """screen_only, keeping the last screenshot of each episode (what a person would see)."""

    shots: dict[str, bytes] = {}

    def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
        report = super().run(task, env, params)
        self.shots[spec_of(task, self._pack.tasks()).task_id] = env.screenshot()
        return report


@pytest.fixture(scope="module")
def runs(pack: ClinicProvider) -> dict[str, Any]:
    tasks = _web(pack)
    out: dict[str, Any] = {
        arm: evaluate(get_baseline(arm, pack), pack, trials=1, tasks=tasks)
        for arm in ARMS
        if arm != "screen_only"
    }
    out["screen_only"] = evaluate(ScreenOnlyWatched(pack), pack, trials=1, tasks=tasks)
    return out


def test_tasks_exist_per_substrate_with_the_same_manifest_entry(pack: ClinicProvider) -> None:
    """Each task is a variant per substrate; the web variant differs only in id and substrate."""
    by_id = {t.task_id: t for t in pack.tasks()}
    api, web = by_id["clinic::partial_note"], by_id["clinic::partial_note@web"]
    assert (api.substrate, web.substrate) == (Substrate.API, Substrate.WEB)
    assert api.expected_effect == web.expected_effect and api.category == web.category
    assert len(by_id) == 30 * 4  # api, web, desktop, remote_display
    assert pack.trial_params(api, 3) == pack.trial_params(web, 3)


@pytest.mark.parametrize("arm", ARMS)
def test_pixel_baselines_get_the_predicted_outcomes_on_the_web(
    runs: dict[str, Any], arm: str
) -> None:
    """Clicking recorded coordinates and reading the banner's colour gives the API ladder."""
    run = runs[arm]
    assert not run.dropped
    got = {
        r.task_id.removeprefix("clinic::").removesuffix("@web"): r.outcome.value for r in run.rows
    }
    assert got == {name: PREDICTED[name][ARMS.index(arm)] for name in LEAN}
    assert {r.substrate for r in run.rows} == {Substrate.WEB}
    assert all(r.env_fingerprint["viewport"] == "1024x640" for r in run.rows)


def test_a_green_banner_on_screen_while_the_oracle_refutes_every_fault_category(
    runs: dict[str, Any],
) -> None:
    """On each of C1-C7 the last screenshot is green and the oracle says the record is wrong."""
    seen = set()
    for row in runs["screen_only"].rows:
        if row.category is Category.CONTROL:
            continue
        shot = ScreenOnlyWatched.shots[row.task_id]
        assert images.size(shot) == (1024, 640)
        assert banner_status(shot) == "success", row.task_id
        x0, y0, x1, y1 = layout.BANNER.region()
        assert images.dominant(images.pixels(shot), (x0, y0, x1, y1)) == BANNER_RGB["success"]
        assert row.outcome.value == SWER and row.oracle.verdict.value == "refuted"
        seen.add(row.category)
    assert seen == set(Category) - {Category.CONTROL}


def test_pixel_baselines_reproduce_row_for_row(pack: ClinicProvider, runs: dict[str, Any]) -> None:
    """A second run of the same arm gives the same rows (timing aside)."""
    again = evaluate(get_baseline("effect_verified", pack), pack, trials=1, tasks=_web(pack))
    first = [strip_timing(r.to_row()) for r in runs["effect_verified"].rows]
    assert [strip_timing(r.to_row()) for r in again.rows] == first


def strip_timing(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("latency_s", "started_at", "finished_at")}


_FORBIDDEN_MODULES = ("playwright", "sqlite3", "greenlet")


def _reachable(value: object, depth: int = 0, seen: set[int] | None = None) -> Iterator[object]:
    seen = set() if seen is None else seen
    if id(value) in seen or depth > 4:
        return
    seen.add(id(value))
    yield value
    children: list[object] = []
    if isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, list | tuple | set):
        children = list(value)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        children = list(vars(value).values())
    for child in children:
        yield from _reachable(child, depth + 1, seen)


def test_nothing_the_env_returns_reaches_the_page_dom_or_oracle(pack: ClinicProvider) -> None:
    """Screenshots, ints, None and the product's REST verifier: no page, DOM or oracle."""
    task = _web(pack, ("clean_draft",))[0]
    params = pack.trial_params(task, 0)
    with pack.provision(task, 0, params) as episode:
        env: ComputerEnv = episode.env
        assert isinstance(env, ComputerEnv)
        calls: Any = env  # every return value is inspected, the Nones of the actions included
        returned: list[object] = [
            calls.screenshot(),
            calls.click(10, 10),
            calls.move(20, 20),
            calls.drag([(20, 20), (30, 30)]),
            calls.mouse_down(),
            calls.mouse_up(),
            calls.cursor_position(),
            calls.type("x"),
            calls.key("Escape"),
            calls.key_down("shift"),
            calls.key_up("shift"),
            calls.scroll(5, 5, 0, 1),
            calls.wait(0),
            calls.product_effect_verifier(),
            calls.all_surfaces_verifier(),
            env.display,
        ]
        for value in _reachable(returned):
            module = type(value).__module__
            assert not module.startswith(_FORBIDDEN_MODULES), module
            assert value is not episode.oracle and not isinstance(value, SqliteOracle)


def test_a_killed_browser_is_an_infrastructure_drop_never_a_halt(pack: ClinicProvider) -> None:
    """The browser dies mid-episode every time: retried once, then dropped as infrastructure."""
    task = _web(pack, ("clean_draft",))[0]
    attempts = []

    class Killer(ScreenOnly):
        name = "killer"

        def run(self, task: AgentTask, env: Any, params: Mapping[str, Any]) -> AgentReport:
            attempts.append(task.handle)
            for pid in chromium_pids():
                os.kill(pid, signal.SIGKILL)
            return super().run(task, env, params)

    out = run_episode(Killer(pack), pack, task, 0, 0)
    assert isinstance(out, DroppedEpisode)
    assert out.reason is DropReason.INFRASTRUCTURE and "browser" in out.detail
    assert len(attempts) == 2
    after = run_episode(get_baseline("screen_only", pack), pack, task, 0, 0)
    assert not isinstance(after, DroppedEpisode) and after.outcome.value == "success"


def _goto(url: str) -> Callable[[Any], Awaitable[Any]]:
    return lambda page: page.goto(url)


def _bounding_box(selector: str) -> Callable[[Any], Awaitable[Any]]:
    return lambda page: page.locator(selector).bounding_box()


def test_the_recorded_layout_is_what_the_browser_draws(pack: ClinicProvider) -> None:
    """Every box the bots click is where the browser puts its control (harness-side check)."""
    from effectbench.packs.clinic.web.app import stylesheet

    page_css = stylesheet()
    for box in (layout.SEARCH_NAME, layout.NOTE, layout.SAVE, layout.EDIT_SAVE, layout.BANNER):
        assert f"left:{box.x}px;top:{box.y}px;width:{box.w}px;height:{box.h}px" in page_css
    task = _web(pack, ("clean_draft",))[0]
    with pack.provision(task, 0, pack.trial_params(task, 0)):
        channel = pack.service.channel
        assert channel is not None
        session = shared_browser().open(layout.VIEWPORT, channel.url, channel.headers())
        try:
            for path, boxes in (
                ("/", {"#q-name": layout.SEARCH_NAME, "#search": layout.SEARCH_BUTTON}),
                (
                    "/chart/M-0101",
                    {
                        "#note": layout.NOTE,
                        "#save": layout.SAVE,
                        "#claim": layout.CLAIM_REF,
                        "#type-follow-up": layout.TYPE_RADIO["Follow-up"],
                        "#type-consult": layout.TYPE_RADIO["Consult"],
                        "#code-99284": layout.CHARGE_RADIO["99284"],
                        "#open-id": layout.OPEN_ENCOUNTER_ID,
                    },
                ),
                ("/chart/M-0101/encounter?id=104", {"#edit-note": layout.EDIT_NOTE}),
            ):
                session.call(_goto(f"http://{channel.host}{path}"))
                for selector, box in boxes.items():
                    got = session.call(_bounding_box(selector))
                    assert got is not None
                    assert (got["x"], got["y"], got["width"], got["height"]) == tuple(box), selector
        finally:
            session.close()


def test_a_shared_browsers_new_renderers_are_not_a_tests_leftovers(
    tmp_path: Path, chromium: Path
) -> None:
    """The leftover check of the screen tests (support.screens.left_since) counts a process
    the test started and left, not a renderer an earlier test's browser starts meanwhile."""
    (tmp_path / "index.html").write_text("<p>a page</p>")
    with served(tmp_path) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        try:
            before = processes_now()
            context = browser.new_context()  # a context shares no renderer with another
            context.new_page().goto(url)
            sleeper = subprocess.Popen(["sleep", "60"])  # noqa: S607 - coreutils
            try:
                new = processes_now() - before
                assert any(b"--type=renderer" in command_line(pid) for pid in new), new
                assert left_since(before) == {sleeper.pid}
            finally:
                sleeper.kill()
                sleeper.wait()
                context.close()
        finally:
            browser.close()


@pytest.mark.parametrize(
    ("pack_name", "value", "message"),
    [
        ("clinic", "bogus", "unknown substrate 'bogus'"),
        ("mockmed", "desktop", "has no 'desktop' substrate (it offers web)"),
    ],
)
def test_run_refuses_an_unknown_or_absent_substrate(
    pack_name: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run --substrate`` with a substrate the pack lacks exits 2 with one line."""
    code = main(["run", "--pack", pack_name, "--baseline", "screen_only", "--substrate", value])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
