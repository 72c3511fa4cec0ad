"""The clinic's web application: server-rendered pages over the same record store.

The record service (:mod:`effectbench.packs.clinic.service`) routes every path
outside ``/api/`` here. Pages are plain HTML forms with no JavaScript at all:

* ``GET /`` and ``GET /search?name=&dob=&mrn=``: patient search (name, narrowed by
  birth date or MRN when given); each result row opens the chart;
* ``GET /chart/MRN``: the chart (patient, encounters) with the new-encounter form
  (type, note, sign, charge code, claim reference) and "open encounter #";
* ``POST /chart/MRN/encounters``: Save, answered by the chart and the banner;
* ``GET /chart/MRN/encounter?id=ID`` and ``POST /chart/MRN/encounters/ID``: edit a note.

Every read and write goes through the episode's
:class:`~effectbench.packs.clinic.store.ClinicStore`: the same ``search``,
``chart``, ``save`` and ``edit`` the JSON routes call, so every fault happens
behind this UI exactly as behind the JSON actions, and the same oracle judges it.
The banner is painted from the store's :class:`~effectbench.packs.clinic.store.Reply`.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from effectbench.episode_http import Page, Reply
from effectbench.kit.pages import document, first_values, frame_rules, label, place, radio
from effectbench.kit.pages import escape as _e
from effectbench.packs.clinic.store import CHARGE_CENTS, ClinicStore
from effectbench.packs.clinic.web import layout as L

ENCOUNTER_TYPES = tuple(L.TYPE_RADIO)

_form_counters: weakref.WeakKeyDictionary[ClinicStore, itertools.count[int]] = (
    weakref.WeakKeyDictionary()
)


def _slug(text: str) -> str:
    return "".join(ch.lower() if ch.isalnum() else "-" for ch in text)


def stylesheet() -> str:
    """Return the one stylesheet: the kit's frame, and a fixed box per control of :mod:`.layout`."""
    rules = [
        *frame_rules("#1f3a5f"),
        "#encounters{overflow:hidden}",
        "#patient{position:absolute;left:24px;top:96px;width:500px;height:56px;font-size:13px}",
        place("#q-name", L.SEARCH_NAME),
        place("#q-dob", L.SEARCH_DOB),
        place("#q-mrn", L.SEARCH_MRN),
        place("#search", L.SEARCH_BUTTON),
        place("#note", L.NOTE),
        place("#sign", L.SIGN),
        place("#claim", L.CLAIM_REF),
        place("#save", L.SAVE),
        place("#open-id", L.OPEN_ENCOUNTER_ID),
        place("#open", L.OPEN_ENCOUNTER_BUTTON),
        place("#encounters", L.ENCOUNTER_LIST),
        place("#edit-note", L.EDIT_NOTE),
        place("#edit-save", L.EDIT_SAVE),
    ]
    rules += [place(f"#type-{_slug(name)}", box) for name, box in L.TYPE_RADIO.items()]
    rules += [place(f"#code-{code}", box) for code, box in L.CHARGE_RADIO.items()]
    return "".join(rules)


_CSS = stylesheet()


def _page(title: str, status: str, banner: str, body: str) -> str:
    return document(_CSS, "Clinic records", title, status, banner, body)


def _search_form(name: str = "", dob: str = "", mrn: str = "") -> str:
    return (
        '<form method="get" action="/search">'
        + label("Name", L.SEARCH_NAME)
        + label("Date of birth", L.SEARCH_DOB)
        + label("MRN", L.SEARCH_MRN)
        + f'<input type="text" id="q-name" name="name" value="{_e(name)}" autocomplete="off">'
        f'<input type="text" id="q-dob" name="dob" value="{_e(dob)}" autocomplete="off">'
        f'<input type="text" id="q-mrn" name="mrn" value="{_e(mrn)}" autocomplete="off">'
        '<button id="search" type="submit">Search</button></form>'
    )


def search_page(store: ClinicStore, query: Mapping[str, str]) -> Page:
    """The search page; with a name, the store's search narrowed by birth date and MRN."""
    name, dob, mrn = (query.get(k, "").strip() for k in ("name", "dob", "mrn"))
    if not name:
        return Page(200, _page("Search", "idle", "Search for a patient", _search_form()))
    reply = store.search(name)
    results = [r for r in reply.details.get("results", []) if isinstance(r, dict)]
    if dob:
        results = [r for r in results if r.get("dob") == dob]
    if mrn:
        results = [r for r in results if r.get("mrn") == mrn]
    rows = "".join(
        f'<a class="row" id="r{i}" href="/chart/{quote(str(r["mrn"]), safe="")}">'
        f"{_e(r['name'])} &middot; born {_e(r['dob'])} &middot; MRN {_e(r['mrn'])}</a>"
        for i, r in enumerate(results[:10])
    )
    if not rows:
        rows = '<p class="none">No chart matches.</p>'
    banner = f"{len(results)} chart(s) match"
    return Page(200, _page("Search", "idle", banner, _search_form(name, dob, mrn) + rows))


def _encounter_rows(encounters: list[dict[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td>#{_e(e['id'])}</td><td>{_e(e['type'])}</td><td>{_e(e['status'])}</td>"
        f"<td>{_e(e['note'])}</td></tr>"
        for e in encounters
    )
    return (
        '<div id="encounters"><table><tr><th>#</th><th>Type</th><th>Status</th><th>Note</th></tr>'
        f"{rows}</table></div>"
    )


def _next_form_key(store: ClinicStore, mrn: str) -> str:
    counter = _form_counters.setdefault(store, itertools.count(1))
    return f"form-{mrn}-{next(counter)}"


def chart_page(store: ClinicStore, mrn: str, outcome: Reply | None = None) -> Page:
    """The chart: patient, encounters, the new-encounter form; ``outcome`` paints the banner."""
    reply = store.chart(mrn)
    if reply.status == "error":
        body = _search_form()
        return Page(reply.http_status, _page("Chart", "error", reply.banner, body))
    patient = reply.details["patient"]
    encounters = [e for e in reply.details.get("encounters", []) if isinstance(e, dict)]
    status, banner = (
        (reply.status, reply.banner)
        if outcome is None
        else (
            outcome.status,
            outcome.banner,
        )
    )
    m = quote(mrn, safe="")
    types = "".join(radio(f"type-{_slug(t)}", "type", t, t) for t in ENCOUNTER_TYPES)
    codes = "".join(radio(f"code-{c}", "charge_code", c, c) for c in CHARGE_CENTS)
    body = (
        f'<div id="patient"><b>{_e(patient["name"])}</b> &middot; born {_e(patient["dob"])} '
        f"&middot; MRN {_e(patient['mrn'])}<br>Allergies: {_e(patient['allergies'])}</div>"
        f'<form method="post" action="/chart/{m}/encounters">'
        f'<input type="hidden" name="mrn" value="{_e(patient["mrn"])}">'
        f'<input type="hidden" name="name" value="{_e(patient["name"])}">'
        f'<input type="hidden" name="idempotency_key" value="{_e(_next_form_key(store, mrn))}">'
        + label("Encounter type", L.TYPE_RADIO["Triage"])
        + types
        + label("Clinical note", L.NOTE)
        + '<textarea id="note" name="note"></textarea>'
        '<label class="opt" id="sign"><input type="checkbox" name="sign" value="1">'
        "Sign and post the charge</label>"
        + codes
        + label("Claim reference", L.CLAIM_REF)
        + '<input type="text" id="claim" name="claim_ref" autocomplete="off">'
        '<button id="save" type="submit">Save</button></form>'
        f'<form method="get" action="/chart/{m}/encounter">'
        + label("Open encounter #", L.OPEN_ENCOUNTER_ID)
        + '<input type="text" id="open-id" name="id" autocomplete="off">'
        '<button id="open" type="submit">Open</button></form>' + _encounter_rows(encounters)
    )
    return Page(
        reply.http_status if outcome is None else outcome.http_status,
        _page("Chart", status, banner, body),
    )


def encounter_page(
    store: ClinicStore, mrn: str, encounter_id: str, outcome: Reply | None = None
) -> Page:
    """One encounter's note, editable; ``outcome`` paints the banner after a save."""
    reply = store.chart(mrn)
    found = None
    if reply.status != "error":
        found = next(
            (e for e in reply.details.get("encounters", []) if str(e.get("id")) == encounter_id),
            None,
        )
    if found is None:
        text = f"No encounter {encounter_id} on chart {mrn}"
        return Page(404, _page("Encounter", "error", text, _search_form()))
    status, banner = (
        ("idle", f"Encounter {encounter_id} of chart {mrn}")
        if outcome is None
        else (
            outcome.status,
            outcome.banner,
        )
    )
    m, i = quote(mrn, safe=""), quote(encounter_id, safe="")
    body = (
        f'<div id="patient">Encounter #{_e(found["id"])} &middot; {_e(found["type"])} &middot; '
        f"{_e(found['status'])}</div>"
        f'<form method="post" action="/chart/{m}/encounters/{i}">'
        + label("Clinical note", L.EDIT_NOTE)
        + f'<textarea id="edit-note" name="note">{_e(found["note"])}</textarea>'
        '<button id="edit-save" type="submit">Save</button></form>'
    )
    return Page(
        200 if outcome is None else outcome.http_status, _page("Encounter", status, banner, body)
    )


def handle_get(store: ClinicStore, path: str) -> Page:
    """Answer a page request."""
    url = urlsplit(path)
    parts = [p for p in url.path.split("/") if p]
    query = first_values(url.query)
    if not parts:
        return search_page(store, {})
    if parts == ["search"]:
        return search_page(store, query)
    if len(parts) == 2 and parts[0] == "chart":
        return chart_page(store, parts[1])
    if len(parts) == 3 and parts[0] == "chart" and parts[2] == "encounter":
        return encounter_page(store, parts[1], query.get("id", "").strip())
    return Page(404, _page("Not found", "error", f"No page {url.path}", _search_form()))


def handle_post(store: ClinicStore, path: str, body: str) -> Page:
    """Handle a form submission: the same store calls as the JSON routes."""
    parts = [p for p in urlsplit(path).path.split("/") if p]
    form = first_values(body, blanks=True)
    if len(parts) == 3 and parts[0] == "chart" and parts[2] == "encounters":
        save: dict[str, Any] = {
            k: form[k] for k in ("mrn", "name", "type", "note", "idempotency_key") if k in form
        }
        if form.get("sign"):
            save |= {
                "sign": True,
                "charge_code": form.get("charge_code", ""),
                "claim_ref": form.get("claim_ref", ""),
            }
        return chart_page(store, parts[1], store.save(save))
    if len(parts) == 4 and parts[0] == "chart" and parts[2] == "encounters" and parts[3].isdigit():
        outcome = store.edit(int(parts[3]), {"note": form.get("note", "")})
        return encounter_page(store, parts[1], parts[3], outcome)
    return Page(404, _page("Not found", "error", f"No page {path}", _search_form()))
