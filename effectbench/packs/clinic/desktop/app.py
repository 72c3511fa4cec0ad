"""The clinic's native desktop front end: GTK 3 over the record service's JSON API.

A separate process, started per episode on the episode's own X display::

    VAR=SECRET python app.py --port PORT --secret-env VAR --secret-header NAME --referral JSON

The episode's secret, which the service requires in header ``NAME`` of every
request, comes in environment variable ``VAR`` (only the app's own user can read
that), never on the command line (every local user can read that).

It is a client of the same record service as the web UI (``GET
/api/patients?name=``, ``GET /api/patients/MRN/chart``, ``POST
/api/encounters``, ``PATCH /api/encounters/ID``), so every fault of the pack
reaches it unchanged, and it paints the same screens: patient search, the
chart, the encounter form, edit, and the status banner (grey idle, green
success, red error), always from the service's reply.

Deterministic by construction: one undecorated window at the origin, every
widget at a fixed rectangle from :mod:`layout`, one font without
antialiasing, no animations, no blinking cursor. Every widget has an
accessible name; the banner is an AT-SPI ``status bar`` whose description is
its status. When its first frame is drawn it writes ``ready`` on fd 3.

Standard library and PyGObject, and the kit renderer's shared pieces (the service
connection, GTK's fixed settings, the ``ready`` signal:
:mod:`effectbench.kit.desktop.render`, which imports nothing else of EffectBench); it
imports :mod:`layout` by path.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gi  # noqa: E402

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
gi.require_version("Atk", "1.0")
import layout as L  # noqa: E402
from gi.repository import Atk, Gtk  # noqa: E402

from effectbench.kit.desktop.render import (  # noqa: E402
    Service,
    apply_settings,
    say_ready_after_first_frame,
)
from effectbench.kit.desktop.render import place as _place  # noqa: E402

CSS = f"""
* {{ font-family: "{L.FONT}"; font-size: {L.FONT_PX}px; transition: none; animation: none; }}
window {{ background-color: rgb{L.BACKGROUND_RGB}; color: black; }}
.banner-idle {{ background-color: rgb{L.BANNER_RGB["idle"]}; }}
.banner-success {{ background-color: rgb{L.BANNER_RGB["success"]}; }}
.banner-error {{ background-color: rgb{L.BANNER_RGB["error"]}; }}
.banner-idle label {{ color: black; }}
.banner-success label, .banner-error label {{ color: white; }}
.title {{ font-weight: bold; }}
.header {{ font-weight: bold; color: rgb(60, 60, 60); }}
"""


def _label(text: str, css: str = "") -> Gtk.Label:
    label = Gtk.Label(label=text)
    label.set_xalign(0.0)
    label.set_single_line_mode(True)
    if css:
        label.get_style_context().add_class(css)
    return label


def _named(widget: Gtk.Widget, name: str) -> Gtk.Widget:
    widget.get_accessible().set_name(name)
    return widget


class ClinicWindow(Gtk.Window):  # type: ignore[misc]
    """The one window: header, referral, banner, and one of four views below."""

    def __init__(self, service: Service, referral: dict[str, Any]) -> None:
        super().__init__(title="Clinic records")
        self.service = service
        self.set_decorated(False)
        self.set_resizable(False)
        self.set_default_size(*L.SCREEN)
        self.set_size_request(*L.SCREEN)
        self.move(0, 0)
        self.root = Gtk.Fixed()
        self.add(self.root)
        _place(self.root, _label("Clinic records", "title"), L.TITLE)
        _place(self.root, _label(_referral_text(referral)), L.REFERRAL)
        self.banner_box = Gtk.EventBox()
        self.banner = _label("")
        self.banner.set_margin_start(12)
        self.banner.get_accessible().set_role(Atk.Role.STATUSBAR)
        self.banner_box.add(self.banner)
        _place(self.root, self.banner_box, L.BANNER)
        self.views: dict[str, Gtk.Fixed] = {}
        for name in ("search", "chart", "form"):
            view = Gtk.Fixed()
            view.set_size_request(L.SCREEN[0], L.SCREEN[1] - 110)
            self.root.put(view, 0, 0)
            self.views[name] = view
        self.rows: list[Gtk.Widget] = []
        self.chart: dict[str, Any] = {}
        self.editing: int | None = None
        self.form_key = ""
        self.form_numbers = itertools.count(1)
        self._build_search()
        self._build_chart()
        self._build_form()
        self.paint({"status": "idle", "banner": "Search for a patient by name, or open a chart"})

    # -- views ---------------------------------------------------------------------------

    def _build_search(self) -> None:
        v = self.views["search"]
        _place(v, _label("Patient name"), L.NAME_LABEL)
        self.name_entry = _named(_place(v, Gtk.Entry(), L.NAME_ENTRY), "Patient name")
        self.name_entry.connect("activate", lambda *_: self.search())
        search = _place(v, Gtk.Button(label="Search"), L.SEARCH_BUTTON)
        search.connect("clicked", lambda *_: self.search())
        _place(v, _label("MRN"), L.MRN_LABEL)
        self.mrn_entry = _named(_place(v, Gtk.Entry(), L.MRN_ENTRY), "MRN")
        self.mrn_entry.connect("activate", lambda *_: self.open_chart(self.mrn_entry.get_text()))
        open_mrn = _place(v, Gtk.Button(label="Open chart"), L.OPEN_MRN_BUTTON)
        open_mrn.connect("clicked", lambda *_: self.open_chart(self.mrn_entry.get_text()))
        for column, title in (("name", "Name"), ("dob", "Date of birth"), ("mrn", "MRN")):
            x, width = L.RESULT_COLUMNS[column]
            _place(v, _label(title, "header"), (x, L.HEADER_Y, width, 24))

    def _build_chart(self) -> None:
        v = self.views["chart"]
        self.patient_line = _place(v, _label(""), L.PATIENT_LINE)
        self.allergy_line = _place(v, _label(""), L.ALLERGY_LINE)
        back = _place(v, Gtk.Button(label="Back to search"), L.BACK_BUTTON)
        back.connect("clicked", lambda *_: self.show("search"))
        new = _place(v, Gtk.Button(label="New encounter"), L.NEW_BUTTON)
        new.connect("clicked", lambda *_: self.new_form())
        titles = {"id": "ID", "type": "Type", "status": "Status", "note": "Note"}
        for column, title in titles.items():
            x, width = L.ENCOUNTER_COLUMNS[column]
            _place(v, _label(title, "header"), (x, L.HEADER_Y, width, 24))

    def _build_form(self) -> None:
        v = self.views["form"]
        self.form_title = _place(v, _label(""), L.FORM_TITLE)
        self.type_label = _place(v, _label("Type"), L.TYPE_LABEL)
        self.type_radios: dict[str, Gtk.RadioButton] = {}
        group: Gtk.RadioButton | None = None
        for kind in L.TYPES:
            radio = Gtk.RadioButton.new_with_label_from_widget(group, kind)
            group = group or radio
            self.type_radios[kind] = _place(v, radio, L.TYPE_RADIOS[kind])
        _place(v, _label("Note"), L.NOTE_LABEL)
        self.note_entry = _named(_place(v, Gtk.Entry(), L.NOTE_ENTRY), "Note")
        self.sign_check = _place(v, Gtk.CheckButton(label="Sign and bill"), L.SIGN_CHECK)
        self.charge_label = _place(v, _label("Charge code"), L.CHARGE_LABEL)
        self.charge_entry = _named(_place(v, Gtk.Entry(), L.CHARGE_ENTRY), "Charge code")
        self.claim_label = _place(v, _label("Claim reference"), L.CLAIM_LABEL)
        self.claim_entry = _named(_place(v, Gtk.Entry(), L.CLAIM_ENTRY), "Claim reference")
        save = _place(v, Gtk.Button(label="Save"), L.SAVE_BUTTON)
        save.connect("clicked", lambda *_: self.save())
        cancel = _place(v, Gtk.Button(label="Cancel"), L.CANCEL_BUTTON)
        cancel.connect("clicked", lambda *_: self.show("chart"))

    def show(self, name: str) -> None:
        """Show view ``name`` and hide the others."""
        for key, view in self.views.items():
            view.set_visible(key == name)
        if name == "form":
            editing = self.editing is not None
            for widget in (
                self.type_label,
                *self.type_radios.values(),
                self.sign_check,
                self.charge_label,
                self.charge_entry,
                self.claim_label,
                self.claim_entry,
            ):
                widget.set_visible(not editing)

    def paint(self, reply: dict[str, Any]) -> None:
        """Paint the banner from a service reply."""
        status = str(reply.get("status", "error"))
        status = status if status in L.BANNER_RGB else "error"
        context = self.banner_box.get_style_context()
        for known in L.BANNER_RGB:
            context.remove_class(f"banner-{known}")
        context.add_class(f"banner-{status}")
        self.banner.set_text(str(reply.get("banner", "")))
        self.banner.get_accessible().set_description(status)

    def _clear_rows(self) -> None:
        for widget in self.rows:
            widget.destroy()
        self.rows = []

    def _row_cell(self, view: Gtk.Fixed, rect: L.Rect, text: str) -> None:
        self.rows.append(_place(view, _label(text), rect))

    # -- actions -------------------------------------------------------------------------

    def search(self) -> None:
        """Find charts by the typed name and list them."""
        name = self.name_entry.get_text()
        reply = self.service.call("GET", "/api/patients?name=" + quote(name, safe=""))
        self._clear_rows()
        results = (reply.get("details") or {}).get("results") or []
        view = self.views["search"]
        for index, row in enumerate(results[: L.MAX_ROWS]):
            for column in ("name", "dob", "mrn"):
                self._row_cell(view, L.cell(L.RESULT_COLUMNS, column, index), str(row[column]))
            button = Gtk.Button(label="Open")
            _named(button, f"Open chart {row['mrn']}")
            button.connect("clicked", lambda _b, mrn=str(row["mrn"]): self.open_chart(mrn))
            rect = (L.RESULT_OPEN_X, L.row_y(index), L.RESULT_OPEN_W, L.ROW_HEIGHT - 8)
            self.rows.append(_place(view, button, rect))
        view.show_all()
        self.show("search")
        self.paint(reply)

    def open_chart(self, mrn: str) -> None:
        """Open the chart ``mrn``: the patient and the encounters the service shows."""
        reply = self.service.call("GET", f"/api/patients/{quote(mrn.strip(), safe='')}/chart")
        self.paint(reply)
        details = reply.get("details") or {}
        patient = details.get("patient")
        if reply.get("status") == "error" or not isinstance(patient, dict):
            return
        self.chart = details
        self._clear_rows()
        view = self.views["chart"]
        self.patient_line.set_text(
            f"{patient['name']}    born {patient['dob']}    MRN {patient['mrn']}"
        )
        self.allergy_line.set_text(f"Allergies: {patient.get('allergies', '')}")
        for index, encounter in enumerate((details.get("encounters") or [])[: L.MAX_ROWS]):
            for column in ("id", "type", "status", "note"):
                rect = L.cell(L.ENCOUNTER_COLUMNS, column, index)
                self._row_cell(view, rect, str(encounter[column]))
            button = Gtk.Button(label="Edit")
            _named(button, f"Edit encounter {encounter['id']}")
            button.connect("clicked", lambda _b, e=dict(encounter): self.edit_form(e))
            rect = (L.ENCOUNTER_EDIT_X, L.row_y(index), L.ENCOUNTER_EDIT_W, L.ROW_HEIGHT - 8)
            self.rows.append(_place(view, button, rect))
        view.show_all()
        self.show("chart")

    def new_form(self) -> None:
        """Open an empty encounter form for the open chart (a fresh idempotency key)."""
        patient = self.chart.get("patient") or {}
        self.editing = None
        # One key per form opened, numbered from 1 in this app (one app per episode), as the
        # web app's: a re-run of the episode writes the same rows.
        self.form_key = f"form-{patient.get('mrn')}-{next(self.form_numbers)}"
        self.form_title.set_text(f"New encounter for {patient.get('name')} ({patient.get('mrn')})")
        self.type_radios[L.TYPES[0]].set_active(True)
        for entry in (self.note_entry, self.charge_entry, self.claim_entry):
            entry.set_text("")
        self.sign_check.set_active(False)
        self.show("form")
        self.paint({"status": "idle", "banner": "New encounter: fill in the form and save"})

    def edit_form(self, encounter: dict[str, Any]) -> None:
        """Open encounter ``encounter`` for editing its note."""
        self.editing = int(encounter["id"])
        self.form_title.set_text(
            f"Edit encounter {encounter['id']} ({encounter['type']}, {encounter['status']})"
        )
        self.note_entry.set_text(str(encounter.get("note", "")))
        self.show("form")
        self.paint({"status": "idle", "banner": f"Editing encounter {encounter['id']}"})

    def save(self) -> None:
        """Send the form (a new encounter or an edit) and paint the service's answer."""
        if self.editing is not None:
            body = {"note": self.note_entry.get_text()}
            reply = self.service.call("PATCH", f"/api/encounters/{self.editing}", body)
        else:
            patient = self.chart.get("patient") or {}
            kind = next(k for k, r in self.type_radios.items() if r.get_active())
            form: dict[str, Any] = {
                "mrn": patient.get("mrn"),
                "name": patient.get("name"),
                "type": kind,
                "note": self.note_entry.get_text(),
                "idempotency_key": self.form_key,
            }
            if self.sign_check.get_active():
                form |= {
                    "sign": True,
                    "charge_code": self.charge_entry.get_text(),
                    "claim_ref": self.claim_entry.get_text(),
                }
            reply = self.service.call("POST", "/api/encounters", form)
        self.paint(reply)


def _referral_text(r: dict[str, Any]) -> str:
    if r.get("encounter_id"):
        return f"Task: update encounter {r['encounter_id']} of chart {r.get('mrn') or '?'}"
    born = f", born {r['dob']}" if r.get("dob") else ""
    mrn = f", MRN {r['mrn']}" if r.get("mrn") else ""
    return f"Referral: {r.get('patient_name', '?')}{born}{mrn}; new {r.get('type', '')} encounter"


def main() -> None:
    """Parse the arguments, show the window, say ``ready`` on fd 3 after the first frame."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret-env", required=True)
    parser.add_argument("--secret-header", required=True)
    parser.add_argument("--referral", default="{}")
    args = parser.parse_args()
    apply_settings(L.FONT, CSS)
    admit = {args.secret_header: os.environ.pop(args.secret_env, "")}
    window = ClinicWindow(Service(args.port, admit), json.loads(args.referral))
    window.connect("destroy", Gtk.main_quit)
    window.show_all()
    window.show("search")
    say_ready_after_first_frame(window)
    Gtk.main()


if __name__ == "__main__":
    main()
