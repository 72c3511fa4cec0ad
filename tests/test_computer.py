"""The computer-use interface: key names, argument checks, scaling and the vendor translators.

The translators are exercised with recorded action traces (tests/computer_traces/),
one per vendor schema, each covering every action of the schema and malformed
actions. The env they drive is a real :class:`ComputerBase` (its checks are part
of what is tested) whose primitives record what reached the screen.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.computer import RecordingScreen, pattern_png

from effectbench.computer import ActionError, ComputerEnv, Display, images
from effectbench.computer.base import ComputerBase
from effectbench.computer.keys import combo_of, parse_combo, parse_keys
from effectbench.computer.scaling import ScaledComputer, fit
from effectbench.computer.vendors import ToolOutput, anthropic, openai, osworld

TRACES = Path(__file__).parent / "computer_traces"


RUNNERS: dict[str, Callable[[ComputerEnv, object, dict[str, Any]], ToolOutput]] = {
    "anthropic": lambda env, step, trace: anthropic.run(env, step, trace["version"]),
    "openai": lambda env, step, trace: openai.run(env, step),
    "osworld": lambda env, step, trace: osworld.run(env, step),
}
SCHEMAS = {
    "anthropic": lambda trace: set(anthropic.ACTIONS[trace["version"]]),
    "openai": lambda trace: set(openai.ACTIONS),
    "osworld": lambda trace: set(osworld.ACTIONS),
}


def _action_name(vendor: str, step: Any) -> set[str]:
    if vendor == "anthropic":
        return {step["action"]}
    if vendor == "openai":
        actions = step.get("actions") or [step["action"]]
        return {a["type"] for a in actions}
    return {step} if isinstance(step, str) else {step["action_type"]}


TRACE_FILES = sorted(TRACES.glob("*.json"))


@pytest.mark.parametrize("path", TRACE_FILES, ids=[p.stem for p in TRACE_FILES])
def test_recorded_trace_maps_every_action_of_the_vendor_schema(path: Path) -> None:
    """Replay a vendor trace: each action reaches the screen as recorded; bad ones are refused."""
    trace = json.loads(path.read_text())
    vendor = trace["vendor"]
    env = RecordingScreen(Display(*trace["display"]))
    covered: set[str] = set()
    for i, step in enumerate(trace["steps"]):
        before = len(env.calls)
        if "error" in step:
            with pytest.raises(ActionError, match=_escape(step["error"])):
                RUNNERS[vendor](env, step["input"], trace)
            assert env.calls[before:] == [], f"step {i}: a refused action reached the screen"
            continue
        out = RUNNERS[vendor](env, step["input"], trace)
        covered |= _action_name(vendor, step["input"])
        assert env.calls[before:] == step["calls"], f"step {i}"
        if step["observe"] == "image":
            assert out.image is not None and out.report is None
            want = step.get("size", trace["display"])
            assert images.size(out.image) == tuple(want)
        elif step["observe"] == "text":
            assert out.text == step["text"]
        else:
            assert out.report is not None
            assert [out.report.reported_success, out.report.halted] == step["report"]
    assert covered == SCHEMAS[vendor](trace), "the trace must exercise every action of the schema"


def _escape(text: str) -> str:
    return re.escape(text)


def test_anthropic_versions_differ_only_by_zoom() -> None:
    """computer_20250124 has no zoom; computer_20251124 adds it and declares it."""
    old, new = (set(anthropic.ACTIONS[v]) for v in anthropic.ACTIONS)
    assert new - old == {"zoom"}
    env = RecordingScreen(Display(64, 40))
    with pytest.raises(ActionError, match="unknown action 'zoom'"):
        anthropic.run(env, {"action": "zoom", "region": [0, 0, 8, 8]}, anthropic.COMPUTER_20250124)
    tool = anthropic.tool_definition(Display(64, 40))
    assert tool["enable_zoom"] is True and tool["display_width_px"] == 64


@pytest.mark.parametrize(
    ("combo", "xdotool", "browser"),
    [
        ("ctrl+s", "ctrl+s", "Control+s"),
        ("Return", "Return", "Enter"),
        ("shift+Tab", "shift+Tab", "Shift+Tab"),
        ("ctrl+shift+Page_Down", "ctrl+shift+Page_Down", "Control+Shift+PageDown"),
        ("super+alt+ctrl+x", "ctrl+alt+super+x", "Control+Alt+Meta+x"),
        ("ctrl+minus", "ctrl+-", "Control+-"),
        ("ctrl++", "ctrl++", "Control++"),
        ("KP_Enter", "KP_Enter", "Enter"),
        ("esc", "Escape", "Escape"),
        ("shift", "shift", "Shift"),
        ("F11", "F11", "F11"),
        ("space", "space", "Space"),
    ],
)
def test_xdotool_combos_parse_to_one_canonical_form(combo: str, xdotool: str, browser: str) -> None:
    """Combos normalise (modifier order, aliases) and map to the browser's key names."""
    parsed = parse_combo(combo)
    assert parsed.xdotool() == xdotool
    assert parsed.playwright() == browser


@pytest.mark.parametrize(
    ("combo", "error"),
    [
        ("", "non-empty"),
        ("ctrl+", "empty name"),
        ("ctrl+Hyper_Q", "unknown key name 'Hyper_Q'"),
        ("a+b", "not a modifier"),
        ("ctrl s", "no spaces"),
        ("\x07", "unknown key name"),
        ("++", "empty name"),
    ],
)
def test_bad_key_combos_are_action_errors(combo: str, error: str) -> None:
    """An unknown or malformed key name is the agent's mistake, reported as an ActionError."""
    with pytest.raises(ActionError, match=_escape(error)):
        parse_combo(combo)


def test_keysyms_for_x_and_vendor_spellings() -> None:
    """X gets keysym names; OpenAI and pyautogui spellings land on the same combo."""
    assert parse_combo("ctrl+minus").keysyms == ("Control_L", "minus")
    assert parse_combo("Return").keysyms == ("Return",)
    assert combo_of(["CTRL", "SHIFT", "T"]) == parse_combo("ctrl+shift+t")
    assert combo_of(["ArrowLeft"]) == parse_combo("Left")
    assert [c.xdotool() for c in parse_keys("ctrl+a BackSpace")] == ["ctrl+a", "BackSpace"]
    with pytest.raises(ActionError):
        combo_of([])


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda e: e.click(64, 0), "off the screen"),
        (lambda e: e.click(0, 40), "off the screen"),
        (lambda e: e.click(True, 3), "whole number"),
        (lambda e: e.click(1, 1, button="thumb"), "unknown mouse button"),
        (lambda e: e.click(1, 1, count=4), "click count"),
        (lambda e: e.drag([(1, 1)]), "2 to 64 points"),
        (lambda e: e.drag([(1, 1), (70, 1)]), "off the screen"),
        (lambda e: e.type("x\x7fy"), "U+007F"),
        (lambda e: e.type("x" * 4001), "at most 4000"),
        (lambda e: e.scroll(1, 1, 0, 51), "notches"),
        (lambda e: e.wait(-1), "0 to 10 seconds"),
        (lambda e: e.wait(float("nan")), "number of seconds"),
        (lambda e: e.key("ctrl+nope"), "unknown key name"),
    ],
)
def test_env_refuses_bad_arguments_before_the_screen(
    call: Callable[[ComputerBase], None], error: str
) -> None:
    """Off-screen points, control characters and bad counts never reach the screen."""
    env = RecordingScreen(Display(64, 40))
    with pytest.raises(ActionError, match=_escape(error)):
        call(env)
    assert env.calls == []


def test_text_allows_tab_and_newline_and_unicode() -> None:
    """A clinical note may hold a newline, a tab and non-ASCII letters."""
    env = RecordingScreen(Display(64, 40))
    env.type("Zoë:\tBP 120/80\nplan: review")
    assert env.calls == [["type", "Zoë:\tBP 120/80\nplan: review"]]


SIDE = st.integers(1, 4000)


@settings(deadline=None)
@given(SIDE, SIDE, SIDE, SIDE, st.data())
def test_scaling_keeps_every_point_on_screen_and_round_trips(
    dw: int, dh: int, sw: int, sh: int, data: st.DataObject
) -> None:
    """A declared point maps onto the screen and back within one declared pixel's span."""
    scaled = ScaledComputer(RecordingScreen(Display(sw, sh)), Display(dw, dh))
    x, y = data.draw(st.integers(0, dw - 1)), data.draw(st.integers(0, dh - 1))
    sx, sy = scaled.to_screen(x, y)
    assert 0 <= sx < sw and 0 <= sy < sh
    bx, by = scaled.to_declared(sx, sy)
    assert abs(bx - x) <= max(1, -(-dw // sw)) and abs(by - y) <= max(1, -(-dh // sh))
    if sw >= dw and sh >= dh:  # upscaling is exact both ways
        assert (bx, by) == (x, y)


def test_scaled_env_maps_clicks_screenshots_and_the_pointer_consistently() -> None:
    """A vendor declaring 1280x800 over a 1024x640 screen: one factor in, the same out."""
    screen = RecordingScreen(Display(1024, 640))
    env = fit(screen, Display(1280, 800))
    assert fit(screen, Display(1024, 640)) is screen
    out = anthropic.run(env, {"action": "left_click", "coordinate": [1279, 799]})
    assert screen.calls[-1] == ["click", 1023, 639, "left", 1]
    assert out.image is not None and images.size(out.image) == (1280, 800)
    anthropic.run(env, {"action": "mouse_move", "coordinate": [640, 400]})
    assert screen.calls[-1] == ["move", 512, 320]
    assert anthropic.run(env, {"action": "cursor_position"}).text == "X=640,Y=400"
    with pytest.raises(ActionError, match="off the screen"):
        anthropic.run(env, {"action": "left_click", "coordinate": [1280, 10]})
    zoomed = anthropic.run(env, {"action": "zoom", "region": [0, 0, 640, 400]}).image
    assert zoomed is not None and images.size(zoomed) == (512, 320)  # full screen resolution
    openai.run(env, {"type": "computer_call", "action": {"type": "click", "x": 0, "y": 0}})
    assert screen.calls[-1] == ["click", 0, 0, "left", 1]


def test_openai_call_output_carries_the_screenshot() -> None:
    """The loop answers a computer_call with a computer_call_output holding the PNG."""
    png = pattern_png(8, 8)
    item = openai.call_output({"call_id": "c1", "pending_safety_checks": [{"id": "s"}]}, png)
    assert item["call_id"] == "c1" and item["type"] == "computer_call_output"
    assert item["output"]["image_url"].startswith("data:image/png;base64,")
    assert "acknowledged_safety_checks" not in item  # nothing is acknowledged by default
    acked = openai.call_output({"call_id": "c1"}, png, acknowledge=[{"id": "s"}])
    assert acked["acknowledged_safety_checks"] == [{"id": "s"}]
