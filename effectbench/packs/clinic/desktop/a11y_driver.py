"""The baselines' scripted attempt on the desktop app, through the accessibility tree.

What a native RPA tool (UIA, AX, AT-SPI selectors) does: find controls by role
and accessible name, set text, invoke actions, and read the status bar. After
each action that submits something it re-reads the tree until the status bar
changes (no fixed sleeps, bounded by :data:`TIMEOUT_S`; the kit's
:mod:`effectbench.kit.desktop.a11y` pieces). Its choices mirror
the API-level attempt: the chart whose MRN matches the referral, else the
first whose birth date matches, else the first listed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from effectbench.computer import A11yNode, AccessibleComputerEnv, images
from effectbench.kit.desktop.a11y import TIMEOUT_S, DriverError, find, press, status_bar, walk
from effectbench.packs.clinic.desktop import layout as L
from effectbench.packs.clinic.tasks import ClinicTask
from effectbench.seam import Screen

__all__ = [
    "DriverError",
    "attempt",
    "concluded",
    "find",
    "press",
    "screen_of",
    "status_bar",
    "walk",
]


def screen_of(tree: A11yNode) -> Screen:
    """What the driver concludes: the status bar's status (description) and text."""
    banner = status_bar(tree)
    status = banner.description if banner.description in L.BANNER_RGB else "error"
    return Screen(status=status, banner=banner.text)


def concluded(env: AccessibleComputerEnv, tree: A11yNode) -> Screen:
    """What the driver reports from the settled ``tree``, once the banner is painted.

    GTK paints on its idle loop, after the tree already says what changed: on a loaded
    machine the screen can still show the old banner when the tree has settled. The driver
    waits (bounded by :data:`TIMEOUT_S`) until the banner's pixels show the status it
    reports, so the screen it leaves (the receipt's report frame) is the one it read.
    """
    screen = screen_of(tree)
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() <= deadline:
        if L.banner_status(images.pixels(env.screenshot())) == screen.status:
            break
    return screen


def _set(env: AccessibleComputerEnv, tree: A11yNode, name: str, text: str) -> None:
    node = find(tree, "text", name)
    if node is None:
        raise DriverError(f"no text field {name!r} on the screen")
    env.a11y_set_text(node.id, text)


def _results(tree: A11yNode) -> list[dict[str, str]]:
    """Read the result list: one row per 'Open chart MRN' button, cells by column."""
    rows = []
    for node in walk(tree):
        if node.role == "push button" and node.name.startswith("Open chart ") and node.name[11:]:
            y = node.extents[1]
            cells = {
                column: next(
                    (
                        n.text
                        for n in walk(tree)
                        if n.role == "label"
                        and n.extents[1] == y
                        and n.extents[0] == L.RESULT_COLUMNS[column][0]
                    ),
                    "",
                )
                for column in ("name", "dob", "mrn")
            }
            rows.append({**cells, "button": node.name, "y": str(y)})
    return sorted(rows, key=lambda r: int(r["y"]))


def attempt(env: AccessibleComputerEnv, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
    """Find, open, fill and save (or edit) through AT-SPI; return the final screen."""
    tree = env.a11y_tree()
    if task.kind == "edit":
        _set(env, tree, "MRN", str(params["mrn"]))
        tree = press(env, tree, "Open chart")
        tree = press(env, tree, f"Edit encounter {params['encounter_id']}")
        _set(env, tree, "Note", str(params["note"]))
        return concluded(env, press(env, tree, "Save"))
    _set(env, tree, "Patient name", str(params["patient_name"]))
    tree = press(env, tree, "Search")
    results = _results(tree)
    if not results:
        return concluded(env, tree)
    pick = (
        next((r for r in results if r["mrn"] == params["mrn"]), None)
        or next((r for r in results if r["dob"] == params["dob"]), None)
        or results[0]
    )
    tree = press(env, tree, pick["button"])
    tree = press(env, tree, "New encounter")
    radio = find(tree, "radio button", str(params["type"]))
    if radio is None:
        raise DriverError(f"no encounter type {params['type']!r} on the form")
    env.a11y_action(radio.id, "click")
    _set(env, tree, "Note", str(params["note"]))
    if task.kind == "sign":
        check = find(tree, "check box", "Sign and bill")
        if check is None:
            raise DriverError("no 'Sign and bill' check box on the form")
        env.a11y_action(check.id, "click")
        _set(env, tree, "Charge code", str(params["charge_code"]))
        _set(env, tree, "Claim reference", str(params["claim_ref"]))
    return concluded(env, press(env, tree, "Save"))
