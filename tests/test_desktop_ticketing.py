"""The ticketing pack on the desktop and remote-display substrates, with no app written by hand.

The desk's declared screens (:data:`effectbench_ticketing.web.layout.SCREENS`) rendered by the
kit's GTK 3 renderer in real per-episode Xvfb / Xvnc / D-Bus / AT-SPI processes, over the real
record service on PostgreSQL with each task's fault, judged by the pack's one oracle. Kept lean
(controls and a task per fault category): the scripted arms get the outcomes the design
predicts (the API ladder) through the accessibility tree on the desktop and by pixels over
RFB; the app's controls sit where the declaration (and so the web pages) put them, under the
declared accessible names; nothing the app shows names a task, a category or a fault; no
process outlives its episode.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from effectbench_ticketing import TicketingProvider
from effectbench_ticketing.store import CATALOGUE
from effectbench_ticketing.web import layout as L
from support.screens import left_since, processes_now
from support.ticketing import ARMS, PREDICTED, short

from effectbench.api import Category, Substrate, TaskSpec, evaluate, forms, get_baseline
from effectbench.computer import A11yNode
from effectbench.kit.desktop.a11y import A11yForms, walk
from effectbench.seam import VIEW_FIELDS

pytestmark = [pytest.mark.desktop, pytest.mark.postgres]

LEAN = (
    "clean_open",
    "reassign_ticket",
    "duplicate_submit",
    "double_credit",
    "homonym_domain",
    "noop_reassign",
)
"""Controls (a new ticket, a reassignment) and faults the three arms tell apart."""


@pytest.fixture(scope="module")
def pack() -> Iterator[TicketingProvider]:
    provider = TicketingProvider()
    yield provider
    provider.close()


def _on(pack: TicketingProvider, substrate: Substrate, names: tuple[str, ...]) -> list[TaskSpec]:
    wanted = {substrate.variant_id(f"ticketing::{n}") for n in names}
    return [t for t in pack.tasks() if t.task_id in wanted]


def test_every_task_is_offered_on_all_four_substrates(pack: TicketingProvider) -> None:
    by_id = {t.task_id: t for t in pack.tasks()}
    for substrate in Substrate:
        variant = by_id[substrate.variant_id("ticketing::stale_contact")]
        assert variant.substrate is substrate
        assert variant.expected_effect == by_id["ticketing::stale_contact"].expected_effect
    assert {t.substrate for t in pack.tasks()} == set(Substrate)


@pytest.mark.parametrize(
    ("substrate", "arms"),
    [
        (Substrate.DESKTOP, ARMS),
        (Substrate.REMOTE_DISPLAY, ("screen_only", "effect_verified_all")),
    ],
)
def test_the_scripted_arms_get_the_predicted_outcomes(
    pack: TicketingProvider, substrate: Substrate, arms: tuple[str, ...]
) -> None:
    before = processes_now()
    tasks = _on(pack, substrate, LEAN)
    assert len(tasks) == len(LEAN)
    for arm in arms:
        run = evaluate(get_baseline(arm, pack), pack, trials=1, tasks=tasks)
        assert not run.dropped, run.dropped
        got = {short(r.task_id): r.outcome.value for r in run.rows}
        assert got == {name: PREDICTED[name][ARMS.index(arm)] for name in LEAN}, arm
        assert {r.substrate for r in run.rows} == {substrate}
        assert {r.env_fingerprint["screen"] for r in run.rows} == {"1024x768"}
    assert left_since(before) == set()  # no X server, bus or app outlived its episode


def _texts(tree: A11yNode) -> set[str]:
    return {t for n in walk(tree) for t in (n.name, n.text, n.description) if t}


def _inside(node: A11yNode, box: forms.Box) -> bool:
    """The node lies within the declared box and covers its centre (where a pixel bot clicks)."""
    x, y, w, h = node.extents
    cx, cy = box.centre
    within = box.x <= x and box.y <= y and x + w <= box.x + box.w and y + h <= box.y + box.h
    return within and x <= cx < x + w and y <= cy < y + h


def _check_form(driver: A11yForms, form: forms.Form) -> None:
    """Every control of ``form`` is on the tree under its declared name, in its box."""
    found: list[tuple[str, str, forms.Box]] = [("push button", form.button.label, form.button.box)]
    for control in form.controls:
        if isinstance(control, forms.Entry):
            found.append(("text", control.label, control.box))
        elif isinstance(control, forms.Check):
            found.append(("check box", control.label, control.box))
        else:
            found += [("radio button", text, box) for _, text, box in control.options]
    for role, name, box in found:
        nodes = [
            n
            for n in walk(driver.tree)
            if n.role == role and n.name == name and "showing" in n.states
        ]
        assert len(nodes) == 1, (role, name)
        assert _inside(nodes[0], box), (role, name, nodes[0].extents, box)


def test_the_app_is_the_declaration_and_says_nothing_of_the_fault(
    pack: TicketingProvider,
) -> None:
    before = processes_now()
    (task,) = _on(pack, Substrate.DESKTOP, ("duplicate_submit",))
    spec = next(d for d in pack.definitions() if d.name == "duplicate_submit")
    params = pack.trial_params(task, 0)
    seen: set[str] = set()
    with pack.provision(task, 0, params) as episode:
        listing = L.SCREENS.views[0].listing
        assert listing is not None
        driver = A11yForms(episode.env, listing.source)
        seen |= _texts(driver.tree)
        for form in L.SCREENS.view("search").forms:
            _check_form(driver, form)
        driver.fill(L.NAME_FIELD, str(params["customer_name"]))
        driver.submit(L.SEARCH.button)
        assert driver.has_result()
        seen |= _texts(driver.tree)
        driver.open_result()
        _check_form(driver, L.NEW_TICKET)
        seen |= _texts(driver.tree)
        driver.fill(L.SUBJECT_FIELD, "x")
        driver.submit(L.NEW_TICKET.button)
        seen |= _texts(driver.tree)
        assert driver.screen().status == "success"  # the fault's green banner
    said = " ".join(seen).lower()
    names = {spec.name, task.task_id, *CATALOGUE.names} | {c.value for c in Category}
    for name in names:
        for spelt in {name.lower(), name.lower().replace("_", " ")}:
            assert not re.search(rf"\b{re.escape(spelt)}\b", said), name
    assert left_since(before) == set()


@pytest.mark.parametrize("substrate", [Substrate.DESKTOP, Substrate.REMOTE_DISPLAY])
def test_the_mcp_task_answer_is_the_closed_view_with_the_screen_it_promises(
    pack: TicketingProvider, substrate: Substrate, tmp_path: Path
) -> None:
    """``task`` is answered before the episode is provisioned: exactly the view's fields, the
    display the front end promises (1024x768, its surface), the desktop's a11y tools."""
    from effectbench.mcp.server import EpisodeServer

    (task,) = _on(pack, substrate, ("clean_open",))
    episode = EpisodeServer(pack, task, 0, tmp_path, vocabulary="computer_13")
    answer = episode.task_answer()
    assert answer is not None  # known before provisioning: the front end states its display
    told = json.loads(answer["content"][0]["text"])
    assert set(told) == set(VIEW_FIELDS)
    assert told["display"]["surface"] == substrate.value
    assert (told["display"]["width"], told["display"]["height"]) == (1024, 768)
    names = {tool.name for tool in episode.tools}
    assert ("a11y_tree" in names) is (substrate is Substrate.DESKTOP)
    assert set(told["vocabulary"]) <= names
