"""The baselines' scripted attempt on the support desk's screens: one script, three substrates.

The script (:func:`steps`) fills the desk's declared forms (:data:`.layout.SCREENS`) through
a :class:`~effectbench.api.forms.FormDriver`: on the web app and the remote display,
EffectBench's pixel bot (:class:`~effectbench.api.pixels.PixelForms`: recorded coordinates
and screen changes, never the DOM); on the desktop, its accessibility driver
(:class:`~effectbench.kit.desktop.a11y.A11yForms`, by accessible names). Its choices mirror
the API-level attempt: the account whose code matches the request, else the first whose
domain matches, else the first by name; so the same faults fool or spare it on every
substrate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from effectbench.api import Screen, forms, pixels
from effectbench_ticketing.tasks import TicketingTask
from effectbench_ticketing.web import layout as L

__all__ = ["a11y_attempt", "attempt", "remote_attempt", "steps"]


def _open_account(driver: forms.FormDriver, params: Mapping[str, Any]) -> bool:
    """Search as the API attempt picks: code match, else domain match, else first by name."""
    name, domain, code = (
        str(params.get(k) or "") for k in ("customer_name", "domain", "customer_id")
    )
    tries = ([("", code)] if code else []) + ([(domain, "")] if domain else []) + [("", "")]
    for d, c in tries:
        driver.fill(L.NAME_FIELD, name)
        driver.fill(L.DOMAIN_FIELD, d)
        driver.fill(L.CODE_FIELD, c)
        driver.submit(L.SEARCH.button)
        if driver.has_result():
            driver.open_result()
            return True
    return False


def steps(driver: forms.FormDriver, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
    """Find the account (or the ticket), fill the form, click Save, read the banner."""
    if task.kind == "reassign":
        driver.fill(L.TICKET_FIELD, str(params["ticket_id"]))
        driver.submit(L.OPEN_TICKET.button)
        if driver.screen().status == "error":
            return driver.screen()
        driver.choose(L.ASSIGNEE, str(params["assignee_id"]))
        driver.fill(L.COMMENT_FIELD, str(params["comment"]))
        driver.submit(L.REASSIGN.button)
        return driver.screen()
    if not _open_account(driver, params):
        return driver.screen()
    driver.fill(L.SUBJECT_FIELD, str(params["subject"]))
    driver.choose(L.PRIORITY, str(params["priority"]))
    driver.fill(L.DESCRIPTION_FIELD, str(params["description"]))
    if task.kind == "credit":
        driver.tick(L.CREDIT_CHECK)
        driver.choose(L.SLA, str(params["sla_code"]))
        driver.fill(L.CREDIT_REF_FIELD, str(params["credit_ref"]))
    driver.submit(L.NEW_TICKET.button)
    return driver.screen()


def attempt(env: Any, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
    """The steps by pixels on the web app."""
    return steps(pixels.PixelForms(env), task, params)


REMOTE_DRAIN = 3
"""Frames in a row that must agree before a click over the remote display (its keys land
after the call returns)."""


def remote_attempt(env: Any, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
    """The steps by pixels on the desktop app seen over the remote display."""
    return steps(pixels.PixelForms(env, drain=REMOTE_DRAIN), task, params)


def a11y_attempt(env: Any, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
    """The steps through the desktop app's accessibility tree."""
    from effectbench.kit.desktop.a11y import A11yForms

    listing = L.SCREENS.views[0].listing
    return steps(A11yForms(env, listing.source if listing else ""), task, params)
