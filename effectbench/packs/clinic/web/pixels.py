"""The baselines' scripted attempt on the web app, the way an RPA bot does it.

The bot knows the fixed layout (:mod:`.layout`, its recorded coordinates) and
sees only screenshots. It clicks, types, and after each click that submits a
form it waits for the screen to change and settle (polling screenshots, never
sleeping a fixed time). It reads two things off the pixels: whether the first
result row is there (its background colour at a probe point) and the colour
of the status banner. It never touches the DOM.

Its choices mirror the API-level attempt: the chart whose MRN matches the
referral, else the first whose birth date matches, else the first by name; so
the same faults fool or spare it on both substrates.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from effectbench.computer import ComputerEnv, images
from effectbench.packs.clinic.tasks import ClinicTask
from effectbench.packs.clinic.web import layout as L
from effectbench.seam import Screen

SETTLE_TIMEOUT_S = 10.0
"""How long the bot waits for a page to change before it reads what is there."""

_STATUS = {"success": L.SUCCESS_RGB, "error": L.ERROR_RGB, "idle": L.IDLE_RGB}
_WORDS = {"success": "green banner", "error": "red banner", "idle": "grey banner"}


def settle(env: ComputerEnv, before: bytes, timeout: float = SETTLE_TIMEOUT_S) -> bytes:
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
    """Return ``success``, ``error`` or ``idle`` from the banner's colour."""
    colour = images.dominant(images.pixels(png), L.BANNER.region())

    def distance(status: str) -> int:
        return sum((a - b) ** 2 for a, b in zip(colour, _STATUS[status], strict=True))

    return min(_STATUS, key=distance)


def screen_of(png: bytes) -> Screen:
    """What the bot concludes from a screenshot: the banner's colour."""
    status = banner_status(png)
    return Screen(status=status, banner=_WORDS[status])


def _has_result(png: bytes) -> bool:
    x, y = L.RESULT_PROBE
    return tuple(int(v) for v in images.pixels(png)[y, x]) == L.RESULT_RGB


def _submit(env: ComputerEnv, box: L.Box) -> bytes:
    before = env.screenshot()
    env.click(*box.centre)
    return settle(env, before)


def _fill(env: ComputerEnv, box: L.Box, text: str) -> None:
    env.click(*box.centre)
    env.key("ctrl+a")
    if text:
        env.type(text)
    else:
        env.key("Delete")


def _search(env: ComputerEnv, name: str, dob: str, mrn: str) -> bytes:
    _fill(env, L.SEARCH_NAME, name)
    _fill(env, L.SEARCH_DOB, dob)
    _fill(env, L.SEARCH_MRN, mrn)
    return _submit(env, L.SEARCH_BUTTON)


def _open_chart(env: ComputerEnv, params: Mapping[str, Any], by_mrn_only: bool) -> bytes | None:
    """Search as the API attempt picks: MRN match, else birth-date match, else first by name."""
    name, dob, mrn = (str(params.get(k) or "") for k in ("patient_name", "dob", "mrn"))
    tries = [("", mrn)] if mrn else []
    if not by_mrn_only:
        tries += [(dob, "")] if dob else []
        tries.append(("", ""))
    for d, m in tries:
        shot = _search(env, name, d, m)
        if _has_result(shot):
            return _submit(env, L.RESULT_ROW)
    return None


def attempt(env: ComputerEnv, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
    """Find the chart, fill the form (or the edit), click Save, read the banner."""
    if task.kind == "edit":
        shot = _open_chart(env, params, by_mrn_only=True)
        if shot is None:
            return screen_of(env.screenshot())
        _fill(env, L.OPEN_ENCOUNTER_ID, str(params["encounter_id"]))
        shot = _submit(env, L.OPEN_ENCOUNTER_BUTTON)
        if banner_status(shot) == "error":
            return screen_of(shot)
        _fill(env, L.EDIT_NOTE, str(params["note"]))
        return screen_of(_submit(env, L.EDIT_SAVE))
    if _open_chart(env, params, by_mrn_only=False) is None:
        return screen_of(env.screenshot())
    kind = L.TYPE_RADIO.get(str(params["type"]))
    if kind is not None:
        env.click(*kind.centre)
    _fill(env, L.NOTE, str(params["note"]))
    if task.kind == "sign":
        env.click(*L.SIGN.centre)
        code = L.CHARGE_RADIO.get(str(params["charge_code"]))
        if code is not None:
            env.click(*code.centre)
        _fill(env, L.CLAIM_REF, str(params["claim_ref"]))
    return screen_of(_submit(env, L.SAVE))
