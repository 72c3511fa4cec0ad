"""A pack's declared screens as a GTK 3 application: the kit's one desktop renderer.

A separate process, started per episode on the episode's own X display::

    VAR=SECRET python -m effectbench.kit.desktop.render --port PORT --secret-env VAR \
        --secret-header NAME --screens JSON --opening TEXT --size WxH

``--screens`` is the pack's :class:`~effectbench.kit.forms.Screens` as JSON (:func:`~effectbench.
kit.forms.as_json`); the app knows nothing else of the pack. The episode's secret, which the
service requires in header ``NAME`` of every request, comes in environment variable ``VAR``
(only the app's own user can read that), never on the command line (every local user can).

It paints the kit's web frame at the declaration's boxes (header, status banner, each view's
summary, forms and listing) on an undecorated window at the screen's origin, so the web
pixel bot's recorded coordinates land on the same controls. Every control's accessible name
is its declared caption; the banner is an AT-SPI ``status bar`` whose description is its
status (and a count of the answers painted); a listing's rows carry the listing's source
as their description. Every read and write goes through the service's JSON routes the
declaration names, so every fault of the pack reaches it unchanged, and the banner always
paints the service's reply.

Deterministic: one font without antialiasing, no animations, no blinking cursor, buttons
that neither take focus nor change colour when pressed. When its first frame is drawn it
writes ``ready`` on fd 3. Standard library and PyGObject only (it imports no pack, and of
EffectBench nothing).
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import string
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
gi.require_version("Atk", "1.0")
from gi.repository import Atk, Gdk, GLib, Gtk  # noqa: E402

FONT_PX = 14
CAPTION_PX = 12
HEADER_H = 40


class Service:
    """One keep-alive HTTP/1.1 connection to the record service on 127.0.0.1."""

    def __init__(self, port: int, admit: dict[str, str]) -> None:
        self._port = port
        self._admit = admit
        self._conn: http.client.HTTPConnection | None = None

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request; an unreachable service is an error screen, as in any client."""
        payload = None if body is None else json.dumps(body).encode("utf-8")
        headers = dict(self._admit)
        if payload is not None:
            headers["Content-Type"] = "application/json"
        try:
            if self._conn is None:
                self._conn = http.client.HTTPConnection("127.0.0.1", self._port, timeout=5)
            self._conn.request(method, path, body=payload, headers=headers)
            response = self._conn.getresponse()
            data = json.loads(response.read())
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            return {"status": "error", "banner": f"record service unreachable ({exc})"}
        return data if isinstance(data, dict) else {"status": "error", "banner": "bad reply"}


def apply_settings(font: str, css: str) -> None:
    """Fix GTK's rendering (one font without antialiasing, no animation, no blinking) and
    add ``css`` for the whole screen."""
    settings = Gtk.Settings.get_default()
    for key, value in (
        ("gtk-theme-name", "Adwaita"),
        ("gtk-font-name", f"{font} 10"),
        ("gtk-xft-antialias", 0),
        ("gtk-xft-hinting", 1),
        ("gtk-xft-hintstyle", "hintfull"),
        ("gtk-xft-rgba", "none"),
        ("gtk-xft-dpi", 96 * 1024),
        ("gtk-enable-animations", False),
        ("gtk-cursor-blink", False),
        ("gtk-enable-event-sounds", False),
    ):
        settings.set_property(key, value)
    provider = Gtk.CssProvider()
    provider.load_from_data(css.encode("utf-8"))
    Gtk.StyleContext.add_provider_for_screen(
        Gdk.Screen.get_default(), provider, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION
    )


def say_ready_after_first_frame(window: Gtk.Window) -> None:
    """Write ``ready`` on fd 3 (then close it) once ``window``'s first frame is drawn."""
    said: list[int] = []

    def _ready() -> bool:
        if not said:  # fd 3 is written once, then closed (the number may be reused later)
            said.append(1)
            try:
                os.write(3, b"ready\n")
            except OSError:
                pass
            os.close(3)
        return False

    def _drawn(*_: object) -> bool:
        window.disconnect(handler)
        GLib.idle_add(_ready)
        return False

    handler = window.connect_after("draw", _drawn)


def _rgb(c: list[int]) -> str:
    return f"rgb({c[0]},{c[1]},{c[2]})"


def stylesheet(screens: Mapping[str, Any]) -> str:
    """Return the app's CSS: the web frame's colours and font, flat buttons that do not
    change when pressed or hovered."""
    accent, banner, row = screens["accent"], screens["banner_rgb"], _rgb(screens["result_rgb"])
    flat = "background-image:none;border:none;border-radius:0;box-shadow:none;outline:none;"
    return f"""
* {{ font-family: "{screens["font"]}"; font-size: {FONT_PX}px; transition: none;
     animation: none; }}
window {{ background-color: #ffffff; color: #111111; }}
entry, button, radiobutton, checkbutton, textview {{ min-height: 0; min-width: 0; }}
entry {{ padding-top: 0; padding-bottom: 0; }}
.header {{ background-color: {accent}; }}
.header label {{ color: #ffffff; font-weight: bold; }}
.caption {{ font-size: {CAPTION_PX}px; color: #555555; }}
.banner-idle {{ background-color: {_rgb(banner["idle"])}; }}
.banner-success {{ background-color: {_rgb(banner["success"])}; }}
.banner-error {{ background-color: {_rgb(banner["error"])}; }}
.banner-idle label {{ color: #222222; }}
.banner-success label, .banner-error label {{ color: #ffffff; }}
button.accent, button.accent:hover, button.accent:active, button.accent:focus {{ {flat}
    background-color: {accent}; color: #ffffff; }}
button.accent label {{ color: #ffffff; }}
button.row, button.row:hover, button.row:active, button.row:focus {{ {flat}
    background-color: {row}; padding: 0 12px; }}
button.row label {{ color: #111111; }}
.listing label {{ font-size: {CAPTION_PX}px; }}
.summary {{ font-size: 13px; }}
"""


class _Blank(string.Formatter):
    """Formats a template over a reply's details; an empty value shows ``none``."""

    def __init__(self, none: str) -> None:
        self.none = none

    def format_field(self, value: Any, format_spec: str) -> str:
        shown = self.none if value is None or value == "" else value
        return str(super().format_field(shown, format_spec))


def place(fixed: Gtk.Fixed, widget: Gtk.Widget, box: Sequence[int]) -> Gtk.Widget:
    """Put ``widget`` on ``fixed`` at ``box`` (``x, y, w, h``), sized to it; return it."""
    x, y, w, h = box
    widget.set_size_request(w, h)
    fixed.put(widget, x, y)
    return widget


def _label(text: str, css: str = "") -> Gtk.Label:
    label = Gtk.Label(label=text)
    label.set_xalign(0.0)
    if css:
        label.get_style_context().add_class(css)
    return label


def _button(text: str, css: str) -> Gtk.Button:
    button = Gtk.Button(label=text)
    button.set_focus_on_click(False)
    button.get_style_context().add_class(css)
    child = button.get_child()
    if isinstance(child, Gtk.Label) and css == "row":
        child.set_xalign(0.0)
    return button


class FormWidgets:
    """The widgets of one declared form, and the fields they hold now."""

    def __init__(self, fixed: Gtk.Fixed, form: Mapping[str, Any]) -> None:
        self.form = form
        self.entries: dict[str, Any] = {}
        self.checks: dict[str, Gtk.CheckButton] = {}
        self.choices: dict[str, dict[str, Gtk.RadioButton]] = {}
        self.none: dict[str, Gtk.RadioButton] = {}
        for control in form["controls"]:
            kind = control["kind"]
            if kind == "Entry":
                self._entry(fixed, control)
            elif kind == "Check":
                check = place(fixed, Gtk.CheckButton(label=control["label"]), control["box"])
                check.set_focus_on_click(False)
                self.checks[control["key"]] = check
            else:
                self._choice(fixed, control)
        button = form["button"]
        self.button = place(fixed, _button(button["label"], "accent"), button["box"])

    def _entry(self, fixed: Gtk.Fixed, control: Mapping[str, Any]) -> None:
        x, y, _, _ = control["box"]
        place(fixed, _label(control["label"], "caption"), [x, y - 16, control["box"][2], 16])
        if control["lines"] > 1:
            view = Gtk.TextView()
            view.set_wrap_mode(Gtk.WrapMode.WORD_CHAR)
            view.get_accessible().set_name(control["label"])
            frame = Gtk.Frame()
            frame.add(view)
            place(fixed, frame, control["box"])
            self.entries[control["key"]] = view
        else:
            entry = Gtk.Entry()
            entry.set_width_chars(1)  # GTK's default minimum (150 px) would outgrow the box
            place(fixed, entry, control["box"])
            entry.get_accessible().set_name(control["label"])
            self.entries[control["key"]] = entry

    def _choice(self, fixed: Gtk.Fixed, control: Mapping[str, Any]) -> None:
        if control["label"]:
            x, y, w, _ = control["options"][0][2]
            place(fixed, _label(control["label"], "caption"), [x, y - 16, w, 16])
        # Nothing chosen is a member of the group that is never shown.
        nothing = Gtk.RadioButton.new_from_widget(None)
        self.none[control["key"]] = nothing
        self.choices[control["key"]] = {}
        for value, text, box in control["options"]:
            radio = Gtk.RadioButton.new_with_label_from_widget(nothing, text)
            radio.set_focus_on_click(False)
            self.choices[control["key"]][value] = place(fixed, radio, box)

    def clear(self) -> None:
        """Empty every field, untick every box, choose nothing."""
        for widget in self.entries.values():
            if isinstance(widget, Gtk.TextView):
                widget.get_buffer().set_text("")
            else:
                widget.set_text("")
        for check in self.checks.values():
            check.set_active(False)
        for nothing in self.none.values():
            nothing.set_active(True)

    def text(self, key: str) -> str:
        """Return the text of field ``key``."""
        widget = self.entries[key]
        if isinstance(widget, Gtk.TextView):
            buffer = widget.get_buffer()
            return str(buffer.get_text(buffer.get_start_iter(), buffer.get_end_iter(), False))
        return str(widget.get_text())

    def fields(self) -> dict[str, Any]:
        """Return what the form sends, by the declaration's rules (:class:`~effectbench.kit.
        forms.Check`, :class:`~effectbench.kit.forms.Choice`)."""
        body: dict[str, Any] = {key: self.text(key) for key in self.entries}
        for control in self.form["controls"]:
            if control["kind"] != "Choice":
                continue
            key = control["key"]
            chosen = [v for v, r in self.choices[key].items() if r.get_active()]
            if chosen:
                body[key] = chosen[0]
            elif control["always"]:
                body[key] = ""
        for control in self.form["controls"]:
            if control["kind"] != "Check":
                continue
            if self.checks[control["key"]].get_active():
                body[control["key"]] = True
                body |= {k: body.get(k, "") for k in control["sends"]}
            else:
                for k in control["sends"]:
                    body.pop(k, None)
        return body


class DeclaredWindow(Gtk.Window):  # type: ignore[misc]
    """The one window: header, banner, and one declared view below."""

    def __init__(
        self, service: Service, screens: Mapping[str, Any], opening: str, size: tuple[int, int]
    ) -> None:
        super().__init__(title=screens["title"])
        self.service = service
        self.screens = screens
        self.formatter = _Blank(screens["none"])
        width, height = size
        self.set_decorated(False)
        self.set_resizable(False)
        self.set_default_size(width, height)
        self.set_size_request(width, height)
        self.move(0, 0)
        self.root = Gtk.Fixed()
        self.add(self.root)
        header = Gtk.EventBox()
        header.get_style_context().add_class("header")
        title = _label(screens["title"])
        title.set_margin_start(24)
        header.add(title)
        place(self.root, header, [0, 0, width, HEADER_H])
        # What the agent was asked, under the frame (the web app's pages have the browser's
        # own chrome for that; here it is the app's only line outside the frame).
        place(self.root, _label(opening, "caption"), [24, height - 40, width - 48, 24])
        self.banner_box = Gtk.EventBox()
        self.answers = itertools.count(1)
        self.banner = _label("")
        self.banner.set_margin_start(24)
        self.banner.get_accessible().set_role(Atk.Role.STATUSBAR)
        self.banner_box.add(self.banner)
        place(self.root, self.banner_box, screens["banner"])
        self.views: dict[str, Gtk.Fixed] = {}
        self.forms: dict[str, FormWidgets] = {}
        self.summaries: dict[str, Gtk.Label] = {}
        self.rows: list[Gtk.Widget] = []
        self.argument = ""
        self.details: dict[str, Any] = {}
        self.keys = itertools.count(1)
        self.key = ""
        for view in screens["views"]:
            self._build(view, width, height)
        start = screens["views"][0]
        self.show_all()
        self.show_view(start["name"])
        self.paint({"status": "idle", "banner": start["idle"]})

    def _build(self, view: Mapping[str, Any], width: int, height: int) -> None:
        fixed = Gtk.Fixed()
        fixed.set_size_request(width, height - 120)
        self.root.put(fixed, 0, 0)
        self.views[view["name"]] = fixed
        if view["summary_box"]:
            summary = place(fixed, _label("", "summary"), view["summary_box"])
            summary.set_yalign(0.0)
            self.summaries[view["name"]] = summary
        for form in view["forms"]:
            widgets = FormWidgets(fixed, form)
            widgets.button.connect("clicked", lambda _b, v=view, f=form: self.submit(v, f))
            self.forms[form["name"]] = widgets

    # -- what the screen shows -----------------------------------------------------------

    def show_view(self, name: str) -> None:
        """Show view ``name`` and hide the others."""
        for key, fixed in self.views.items():
            fixed.set_visible(key == name)

    def paint(self, reply: Mapping[str, Any]) -> None:
        """Paint the banner from a service reply."""
        status = str(reply.get("status", "error"))
        status = status if status in self.screens["banner_rgb"] else "error"
        context = self.banner_box.get_style_context()
        for known in self.screens["banner_rgb"]:
            context.remove_class(f"banner-{known}")
        context.add_class(f"banner-{status}")
        self.banner.set_text(str(reply.get("banner", "")))
        # The status, and how many answers the banner has painted: a reader can tell a new
        # answer from the same text painted again.
        self.banner.get_accessible().set_description(f"{status} {next(self.answers)}")

    def fill(self, text: str, values: Mapping[str, Any]) -> str:
        """Format a declared template over ``values``."""
        try:
            return self.formatter.vformat(text, (), values)
        except (KeyError, IndexError, TypeError, ValueError):
            return ""

    def list_rows(self, view: Mapping[str, Any], rows: list[dict[str, Any]]) -> None:
        """Replace the view's listing with ``rows``."""
        for widget in self.rows:
            widget.destroy()
        self.rows = []
        listing = view["listing"]
        if listing is None:
            return
        fixed = self.views[view["name"]]
        x, y, w, h = listing["box"]
        step = listing["step"]
        opens = listing["opens"]
        texts = [self.fill(listing["text"], row) for row in rows[: listing["rows"]]]
        if opens is None:
            lines = [listing["heading"], *texts] if listing["heading"] else texts
            for i, text in enumerate(lines):
                cell = place(fixed, _label(text, "listing"), [x, y + i * step, w, step])
                cell.set_ellipsize(3)  # Pango.EllipsizeMode.END: a long line stays in its box
                self.rows.append(cell)
        elif not texts and listing["empty"]:
            self.rows.append(place(fixed, _label(listing["empty"], "caption"), [x, y, w, h]))
        for i, (row, text) in enumerate(zip(rows, texts, strict=False)):
            if opens is None:
                break
            button = _button(text, "row")
            button.get_accessible().set_description(listing["source"])
            target, argument = opens[0], self.fill(opens[1], row)
            button.connect("clicked", lambda _b, t=target, a=argument: self.open_view(t, a))
            self.rows.append(place(fixed, button, [x, y + i * step, w, h]))
        fixed.show_all()

    # -- what the buttons do -------------------------------------------------------------

    def open_view(self, name: str, argument: str, outcome: Mapping[str, Any] | None = None) -> None:
        """Open view ``name`` for ``argument``: load it, fill it, paint ``outcome`` (else the
        load's reply); a failed load returns to the first view with the error."""
        view = next(v for v in self.screens["views"] if v["name"] == name)
        reply: Mapping[str, Any] = {"status": "idle", "banner": view["idle"]}
        details: dict[str, Any] = {}
        if view["load"] is not None:
            path = view["load"]["path"].format(id=quote(argument.strip(), safe=""))
            reply = self.service.call(view["load"]["method"], path)
            details = reply.get("details") or {}
            if reply.get("status") == "error" or not details:
                start = self.screens["views"][0]
                self.list_rows(start, [])
                self.show_view(start["name"])
                self.paint(reply)
                return
        self.argument, self.details = argument.strip(), details
        if name in self.summaries:
            lines = (self.fill(line, details) for line in view["summary"])
            self.summaries[name].set_text("\n".join(lines))
        listing = view["listing"]
        self.list_rows(view, list(details.get(listing["source"], [])) if listing else [])
        for form in view["forms"]:
            self.forms[form["name"]].clear()
            if form["key"]:  # one key per form shown, numbered from 1, as the web app's
                self.key = f"form-{self.argument}-{next(self.keys)}"
        self.show_view(name)
        self.paint(reply if outcome is None else outcome)

    def submit(self, view: Mapping[str, Any], form: Mapping[str, Any]) -> None:
        """Send ``form`` and show the reply where the declaration says."""
        widgets = self.forms[form["name"]]
        body = widgets.fields()
        then = form["then"]
        if then.startswith("open:"):
            self.open_view(then[len("open:") :], next(iter(body.values()), ""))
            return
        body |= {k: self.fill(t, self.details) for k, t in form["context"]}
        if form["key"]:
            body[form["key"]] = self.key
        quoted = {k: quote(str(v).strip(), safe="") for k, v in body.items()}
        path = form["request"]["path"].format(**quoted, id=quote(self.argument, safe=""))
        method = form["request"]["method"]
        reply = self.service.call(method, path, None if method == "GET" else body)
        if then == "reload":
            self.open_view(view["name"], self.argument, reply)
            return
        rows = (reply.get("details") or {}).get(view["listing"]["source"]) or []
        for field, key in form["filters"]:
            wanted = str(body.get(field, "")).strip()
            rows = [r for r in rows if not wanted or str(r.get(key)) == wanted]
        self.list_rows(view, [r for r in rows if isinstance(r, dict)])
        self.paint(reply)


def main() -> None:
    """Parse the arguments, show the window, say ``ready`` on fd 3 after the first frame."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--secret-env", required=True)
    parser.add_argument("--secret-header", required=True)
    parser.add_argument("--screens", required=True)
    parser.add_argument("--opening", default="")
    parser.add_argument("--size", default="1024x768", help="the screen's WIDTHxHEIGHT")
    args = parser.parse_args()
    width, _, height = args.size.partition("x")
    screens = json.loads(args.screens)
    apply_settings(screens["font"], stylesheet(screens))
    admit = {args.secret_header: os.environ.pop(args.secret_env, "")}
    window = DeclaredWindow(
        Service(args.port, admit), screens, args.opening, (int(width), int(height))
    )
    window.connect("destroy", Gtk.main_quit)
    say_ready_after_first_frame(window)
    Gtk.main()


if __name__ == "__main__":
    main()
