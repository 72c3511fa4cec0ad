"""The baselines' scripted attempt on the web app, the way an RPA bot does it.

The bot knows the fixed layout (:mod:`.layout`, its recorded coordinates) and sees only
screenshots. It clicks, types, and after each click that submits a form it waits for the
screen to change and hold still (polling screenshots, never sleeping a fixed time). It reads
two things off the pixels: whether the first result row is there (its background colour at a
probe point) and the colour of the status banner. It never touches the DOM.

Its choices mirror the API-level attempt: the account whose code matches the request, else
the first whose domain matches, else the first by name; so the same faults fool or spare it
on both substrates.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from effectbench.api import Screen
from effectbench_ticketing.tasks import TicketingTask
from effectbench_ticketing.web import layout as L
from effectbench_ticketing.web import screen

SETTLE_TIMEOUT_S = 10.0
"""How long the bot waits for a page to change before it reads what is there."""

_STATUS = {"success": L.SUCCESS_RGB, "error": L.ERROR_RGB, "idle": L.IDLE_RGB}
_WORDS = {"success": "green banner", "error": "red banner", "idle": "grey banner"}


def settle(env: screen.ComputerEnv, before: bytes, timeout: float = SETTLE_TIMEOUT_S) -> bytes:
    """Poll screenshots until the screen differs from ``before`` and holds still for a frame."""
    deadline = time.monotonic() + timeout
    last = before
    while time.monotonic() < deadline:
        shot = env.screenshot()
        if shot != before and shot == last:
            return shot
        last = shot
    return last


def banner_status(png: bytes) -> str:
    """Return ``success``, ``error`` or ``idle``: the status colour nearest the banner's."""
    colour = screen.dominant(png, L.BANNER.region())
    return min(
        _STATUS, key=lambda s: sum((a - b) ** 2 for a, b in zip(colour, _STATUS[s], strict=True))
    )


def screen_of(png: bytes) -> Screen:
    """What the bot concludes from a screenshot: the banner's colour."""
    status = banner_status(png)
    return Screen(status=status, banner=_WORDS[status])


def _has_result(png: bytes) -> bool:
    return screen.pixel_at(png, *L.RESULT_PROBE) == L.RESULT_RGB


def _submit(env: screen.ComputerEnv, box: L.Box) -> bytes:
    before = env.screenshot()
    env.click(*box.centre)
    return settle(env, before)


def _fill(env: screen.ComputerEnv, box: L.Box, text: str) -> None:
    env.click(*box.centre)
    env.key("ctrl+a")
    if text:
        env.type(text)
    else:
        env.key("Delete")


def _open_account(env: screen.ComputerEnv, params: Mapping[str, Any]) -> bool:
    """Search as the API attempt picks: code match, else domain match, else first by name."""
    name, domain, code = (
        str(params.get(k) or "") for k in ("customer_name", "domain", "customer_id")
    )
    tries = ([("", code)] if code else []) + ([(domain, "")] if domain else []) + [("", "")]
    for d, c in tries:
        _fill(env, L.SEARCH_NAME, name)
        _fill(env, L.SEARCH_DOMAIN, d)
        _fill(env, L.SEARCH_CODE, c)
        if _has_result(_submit(env, L.SEARCH_BUTTON)):
            _submit(env, L.RESULT_ROW)
            return True
    return False


def attempt(env: screen.ComputerEnv, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
    """Find the account (or the ticket), fill the form, click Save, read the banner."""
    if task.kind == "reassign":
        _fill(env, L.OPEN_TICKET_ID, str(params["ticket_id"]))
        shot = _submit(env, L.OPEN_TICKET_BUTTON)
        if banner_status(shot) == "error":
            return screen_of(shot)
        agent = L.ASSIGNEE_RADIO.get(str(params["assignee_id"]))
        if agent is not None:
            env.click(*agent.centre)
        _fill(env, L.COMMENT, str(params["comment"]))
        return screen_of(_submit(env, L.REASSIGN_SAVE))
    if not _open_account(env, params):
        return screen_of(env.screenshot())
    _fill(env, L.SUBJECT, str(params["subject"]))
    priority = L.PRIORITY_RADIO.get(str(params["priority"]))
    if priority is not None:
        env.click(*priority.centre)
    _fill(env, L.DESCRIPTION, str(params["description"]))
    if task.kind == "credit":
        env.click(*L.CREDIT.centre)
        sla = L.SLA_RADIO.get(str(params["sla_code"]))
        if sla is not None:
            env.click(*sla.centre)
        _fill(env, L.CREDIT_REF, str(params["credit_ref"]))
    return screen_of(_submit(env, L.SAVE))
