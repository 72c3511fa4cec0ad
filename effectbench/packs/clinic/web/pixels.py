"""The baselines' scripted attempt on the clinic's web app, by the kit's pixel bot.

The bot (:mod:`effectbench.kit.pixels`) knows the fixed layout (:mod:`.layout`, its recorded
coordinates) and sees only screenshots. Its choices mirror the API-level attempt: the chart
whose MRN matches the referral, else the first whose birth date matches, else the first by
name; so the same faults fool or spare it on both substrates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from effectbench.kit.pages import RESULT_ROW
from effectbench.kit.pixels import banner_status, choose, fill, has_result, screen_of, submit
from effectbench.packs.clinic.tasks import ClinicTask
from effectbench.packs.clinic.web import layout as L
from effectbench.seam import Screen

__all__ = ["attempt", "banner_status"]


def _open_chart(env: Any, params: Mapping[str, Any], by_mrn_only: bool) -> bytes | None:
    """Search as the API attempt picks: MRN match, else birth-date match, else first by name."""
    name, dob, mrn = (str(params.get(k) or "") for k in ("patient_name", "dob", "mrn"))
    tries = [("", mrn)] if mrn else []
    if not by_mrn_only:
        tries += [(dob, "")] if dob else []
        tries.append(("", ""))
    for d, m in tries:
        fill(env, L.SEARCH_NAME, name)
        fill(env, L.SEARCH_DOB, d)
        fill(env, L.SEARCH_MRN, m)
        if has_result(submit(env, L.SEARCH_BUTTON)):
            return submit(env, RESULT_ROW)
    return None


def attempt(env: Any, task: ClinicTask, params: Mapping[str, Any]) -> Screen:
    """Find the chart, fill the form (or the edit), click Save, read the banner."""
    if task.kind == "edit":
        shot = _open_chart(env, params, by_mrn_only=True)
        if shot is None:
            return screen_of(env.screenshot())
        fill(env, L.OPEN_ENCOUNTER_ID, str(params["encounter_id"]))
        shot = submit(env, L.OPEN_ENCOUNTER_BUTTON)
        if banner_status(shot) == "error":
            return screen_of(shot)
        fill(env, L.EDIT_NOTE, str(params["note"]))
        return screen_of(submit(env, L.EDIT_SAVE))
    if _open_chart(env, params, by_mrn_only=False) is None:
        return screen_of(env.screenshot())
    choose(env, L.TYPE_RADIO, str(params["type"]))
    fill(env, L.NOTE, str(params["note"]))
    if task.kind == "sign":
        env.click(*L.SIGN.centre)
        choose(env, L.CHARGE_RADIO, str(params["charge_code"]))
        fill(env, L.CLAIM_REF, str(params["claim_ref"]))
    return screen_of(submit(env, L.SAVE))
