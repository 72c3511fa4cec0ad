"""The baselines' scripted attempt on the support desk's web app, by EffectBench's pixel bot.

The bot (:mod:`effectbench.api.pixels`) knows the fixed layout (:mod:`.layout`, its recorded
coordinates) and sees only screenshots. Its choices mirror the API-level attempt: the account
whose code matches the request, else the first whose domain matches, else the first by name;
so the same faults fool or spare it on both substrates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from effectbench.api import Screen, pages, pixels
from effectbench_ticketing.tasks import TicketingTask
from effectbench_ticketing.web import layout as L

__all__ = ["attempt"]


def _open_account(env: Any, params: Mapping[str, Any]) -> bool:
    """Search as the API attempt picks: code match, else domain match, else first by name."""
    name, domain, code = (
        str(params.get(k) or "") for k in ("customer_name", "domain", "customer_id")
    )
    tries = ([("", code)] if code else []) + ([(domain, "")] if domain else []) + [("", "")]
    for d, c in tries:
        pixels.fill(env, L.SEARCH_NAME, name)
        pixels.fill(env, L.SEARCH_DOMAIN, d)
        pixels.fill(env, L.SEARCH_CODE, c)
        if pixels.has_result(pixels.submit(env, L.SEARCH_BUTTON)):
            pixels.submit(env, pages.RESULT_ROW)
            return True
    return False


def attempt(env: Any, task: TicketingTask, params: Mapping[str, Any]) -> Screen:
    """Find the account (or the ticket), fill the form, click Save, read the banner."""
    if task.kind == "reassign":
        pixels.fill(env, L.OPEN_TICKET_ID, str(params["ticket_id"]))
        shot = pixels.submit(env, L.OPEN_TICKET_BUTTON)
        if pixels.banner_status(shot) == "error":
            return pixels.screen_of(shot)
        pixels.choose(env, L.ASSIGNEE_RADIO, str(params["assignee_id"]))
        pixels.fill(env, L.COMMENT, str(params["comment"]))
        return pixels.screen_of(pixels.submit(env, L.REASSIGN_SAVE))
    if not _open_account(env, params):
        return pixels.screen_of(env.screenshot())
    pixels.fill(env, L.SUBJECT, str(params["subject"]))
    pixels.choose(env, L.PRIORITY_RADIO, str(params["priority"]))
    pixels.fill(env, L.DESCRIPTION, str(params["description"]))
    if task.kind == "credit":
        env.click(*L.CREDIT.centre)
        pixels.choose(env, L.SLA_RADIO, str(params["sla_code"]))
        pixels.fill(env, L.CREDIT_REF, str(params["credit_ref"]))
    return pixels.screen_of(pixels.submit(env, L.SAVE))
