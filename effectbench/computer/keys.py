"""Key names: xdotool combos parsed and checked, one alias table for every vendor.

An agent names keys in xdotool syntax (``"ctrl+s"``, ``"Return"``,
``"shift+Tab"``); vendors spell the same keys their own way (OpenAI sends
``["CTRL", "S"]``, OSWorld sends pyautogui names such as ``"enter"``). Every
spelling goes through :func:`parse_combo`, which maps it onto one canonical
:class:`KeyCombo` (xdotool keysym names) or raises
:class:`~effectbench.computer.ActionError` naming the unknown key. A front end
then asks the combo for the name its input layer wants (:meth:`KeyCombo.playwright`
for a browser, :attr:`KeyCombo.keysyms` for X).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from effectbench.computer import ActionError

MODIFIERS = ("ctrl", "alt", "shift", "super")
"""Canonical modifier names, in the order a combo lists them."""

_MODIFIER_ALIASES = {
    "ctrl": "ctrl",
    "control": "ctrl",
    "control_l": "ctrl",
    "control_r": "ctrl",
    "alt": "alt",
    "alt_l": "alt",
    "alt_r": "alt",
    "option": "alt",
    "shift": "shift",
    "shift_l": "shift",
    "shift_r": "shift",
    "super": "super",
    "super_l": "super",
    "super_r": "super",
    "meta": "super",
    "cmd": "super",
    "command": "super",
    "win": "super",
    "windows": "super",
}

_PLAYWRIGHT_MODIFIER = {"ctrl": "Control", "alt": "Alt", "shift": "Shift", "super": "Meta"}
_KEYSYM_MODIFIER = {"ctrl": "Control_L", "alt": "Alt_L", "shift": "Shift_L", "super": "Super_L"}

NAMED_KEYS: dict[str, str] = {
    "Return": "Enter",
    "KP_Enter": "Enter",
    "Tab": "Tab",
    "Escape": "Escape",
    "BackSpace": "Backspace",
    "Delete": "Delete",
    "Insert": "Insert",
    "Home": "Home",
    "End": "End",
    "Page_Up": "PageUp",
    "Page_Down": "PageDown",
    "Up": "ArrowUp",
    "Down": "ArrowDown",
    "Left": "ArrowLeft",
    "Right": "ArrowRight",
    "space": "Space",
    "Caps_Lock": "CapsLock",
    "Menu": "ContextMenu",
    **{f"F{n}": f"F{n}" for n in range(1, 13)},
}
"""Canonical xdotool keysyms of non-character keys, with the browser's key name."""

CHARACTER_KEYSYMS: dict[str, str] = {
    "minus": "-",
    "equal": "=",
    "plus": "+",
    "comma": ",",
    "period": ".",
    "slash": "/",
    "backslash": "\\",
    "semicolon": ";",
    "colon": ":",
    "apostrophe": "'",
    "quotedbl": '"',
    "grave": "`",
    "asciitilde": "~",
    "bracketleft": "[",
    "bracketright": "]",
    "braceleft": "{",
    "braceright": "}",
    "parenleft": "(",
    "parenright": ")",
    "less": "<",
    "greater": ">",
    "underscore": "_",
    "question": "?",
    "exclam": "!",
    "at": "@",
    "numbersign": "#",
    "dollar": "$",
    "percent": "%",
    "asciicircum": "^",
    "ampersand": "&",
    "asterisk": "*",
    "bar": "|",
}
"""xdotool keysym names of punctuation, with the character each types."""

_KEY_ALIASES = {
    "enter": "Return",
    "return": "Return",
    "kp_enter": "KP_Enter",
    "tab": "Tab",
    "esc": "Escape",
    "escape": "Escape",
    "backspace": "BackSpace",
    "back_space": "BackSpace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "ins": "Insert",
    "home": "Home",
    "end": "End",
    "page_up": "Page_Up",
    "pageup": "Page_Up",
    "pgup": "Page_Up",
    "prior": "Page_Up",
    "page_down": "Page_Down",
    "pagedown": "Page_Down",
    "pgdn": "Page_Down",
    "next": "Page_Down",
    "up": "Up",
    "arrowup": "Up",
    "down": "Down",
    "arrowdown": "Down",
    "left": "Left",
    "arrowleft": "Left",
    "right": "Right",
    "arrowright": "Right",
    "space": "space",
    "spacebar": "space",
    "caps_lock": "Caps_Lock",
    "capslock": "Caps_Lock",
    "menu": "Menu",
    **{f"f{n}": f"F{n}" for n in range(1, 13)},
    **{name.lower(): name for name in CHARACTER_KEYSYMS},
}
"""Case-insensitive spellings (xdotool, pyautogui, OpenAI, DOM) of each named key."""

_CHAR_TO_KEYSYM = {char: name for name, char in CHARACTER_KEYSYMS.items()}


@dataclass(frozen=True)
class KeyCombo:
    """Modifiers held while one key is pressed; ``key`` is a keysym or one character."""

    modifiers: tuple[str, ...]
    key: str | None
    """``None`` when the combo is modifiers only (``"shift"``)."""

    def xdotool(self) -> str:
        """Return the combo in canonical xdotool syntax (``"ctrl+s"``)."""
        return "+".join((*self.modifiers, *([self.key] if self.key is not None else [])))

    def playwright(self) -> str:
        """Return the combo as a browser key chord (``"Control+s"``)."""
        parts = [_PLAYWRIGHT_MODIFIER[m] for m in self.modifiers]
        if self.key is not None:
            parts.append(_browser_key(self.key))
        return "+".join(parts)

    @property
    def keysyms(self) -> tuple[str, ...]:
        """Return the X keysym names to press in order (modifiers first)."""
        syms = [_KEYSYM_MODIFIER[m] for m in self.modifiers]
        if self.key is not None:
            syms.append(_CHAR_TO_KEYSYM.get(self.key, self.key))
        return tuple(syms)


def _browser_key(key: str) -> str:
    if key in NAMED_KEYS:
        return NAMED_KEYS[key]
    return key


def _modifier(name: str) -> str | None:
    return _MODIFIER_ALIASES.get(name.lower())


def _key(name: str) -> str | None:
    """Return the canonical key for one name (not a modifier), or ``None`` if unknown."""
    if len(name) == 1:
        return name if name.isprintable() and not name.isspace() else None
    canonical = _KEY_ALIASES.get(name.lower())
    if canonical is None:
        return None
    return CHARACTER_KEYSYMS.get(canonical, canonical)


def _split(text: str) -> list[str]:
    """Split at ``+``; a trailing ``++`` (or a lone ``+``) names the plus key itself."""
    if text == "+":
        return ["+"]
    if text.endswith("++"):
        return [*text[:-2].split("+"), "+"]
    return text.split("+")


def parse_combo(combo: object) -> KeyCombo:
    """Parse one xdotool key combination; an unknown or malformed name is an ActionError."""
    if not isinstance(combo, str) or not combo.strip():
        raise ActionError(f"a key combination must be a non-empty string, got {combo!r}")
    text = combo.strip()
    if any(ch.isspace() for ch in text):
        raise ActionError(f"one key combination has no spaces: {combo!r}")
    parts = _split(text)
    if any(not p for p in parts):
        raise ActionError(f"malformed key combination {combo!r} (empty name between '+')")
    modifiers: list[str] = []
    key: str | None = None
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        mod = _modifier(part)
        if mod is not None and (not last or key is None):
            if mod not in modifiers:
                modifiers.append(mod)
            continue
        if not last:
            raise ActionError(f"{part!r} in {combo!r} is not a modifier (only the last key is not)")
        key = _key(part)
        if key is None:
            raise ActionError(f"unknown key name {part!r} in {combo!r}")
    ordered = tuple(m for m in MODIFIERS if m in modifiers)
    return KeyCombo(modifiers=ordered, key=key)


def parse_keys(text: object) -> tuple[KeyCombo, ...]:
    """Parse an xdotool ``key`` argument: one or more combos separated by spaces."""
    if not isinstance(text, str) or not text.strip():
        raise ActionError(f"keys must be a non-empty string, got {text!r}")
    return tuple(parse_combo(part) for part in text.split())


def combo_of(names: Sequence[object]) -> KeyCombo:
    """Build one combo from a list of key names pressed together (``["CTRL", "S"]``)."""
    if isinstance(names, str) or not names:
        raise ActionError(f"keys must be a non-empty list of key names, got {names!r}")
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise ActionError(f"malformed key name {name!r}")
    spelled = [str(n) for n in names]
    if len(spelled) > 1:  # a chord names keys, not characters: CTRL+A is ctrl+a
        spelled = [n.lower() if len(n) == 1 and n.isascii() and n.isalpha() else n for n in spelled]
    return parse_combo("+".join(spelled))


__all__ = [
    "CHARACTER_KEYSYMS",
    "MODIFIERS",
    "NAMED_KEYS",
    "KeyCombo",
    "combo_of",
    "parse_combo",
    "parse_keys",
]
