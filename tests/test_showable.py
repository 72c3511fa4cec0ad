"""What may be shown is one rule: an allow-list of Unicode categories, pinned to one Unicode
version, read alike by the verifier, the published JSON Schema, the site and the renderer.

Every class of code point goes through the real verifier and a real site build: the
refused ones are ``structure.text`` findings, and nothing aborts the build (vl-convert
aborts its whole process on U+FFFE or ESC in a label)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError
from support.bundles import make_bundle, read_submission, write_submission
from support.site import site_root

from effectbench import showable
from effectbench.bundle import SystemInfo
from effectbench.computer import ActionError
from effectbench.computer.checks import text as typed_text
from effectbench.site import build_site
from effectbench.site._entries import shown
from effectbench.site._pages import environment
from effectbench.site._render import shown_strings
from verifier.api import VerifyOptions, verify_path

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_PATH = ROOT / "docs" / "submission.schema.json"

ALLOWED = {
    "Lu": "A",
    "Ll": "a",
    "Lt": "\u01c5",
    "Lm": "\u02b0",
    "Lo": "\u6771",
    "Mn": "e\u0301",
    "Mc": "\u0915\u0903",
    "Me": "\u20dd",
    "Nd": "7",
    "Nl": "\u216b",
    "No": "\u00bd",
    "Pc": "_",
    "Pd": "-",
    "Ps": "(",
    "Pe": ")",
    "Pi": "\u00ab",
    "Pf": "\u00bb",
    "Po": "!",
    "Sm": "+",
    "Sc": "\u20ac",
    "Sk": "^",
    "So": "\u00a9",
    "Zs space": " ",
    "Zs no-break space": "\u00a0",
    "accented name": "Zo\u00eb Br\u00fbl\u00e9e",
    "CJK": "\u6771\u4eac\u5927\u5b66",
    "Hebrew (a right-to-left letter)": "\u05d0",
    "Arabic": "\u0639\u0631\u0628\u064a",
    "emoji": "\U0001f680",
    "emoji skin tone": "\U0001f44b\U0001f3fd",
    "Unicode 15 emoji (Cn to Python 3.11)": "\U0001fae8",
    "replacement character": "\ufffd",
}
"""A representative of each allowed class (shown as it is)."""

REFUSED = {
    "Cc NUL": "\x00",
    "Cc ESC": "\x1b",
    "Cc tab": "\t",
    "Cc newline": "\n",
    "Cc NEL": "\x85",
    "Cf soft hyphen": "\u00ad",
    "Cf Arabic letter mark": "\u061c",
    "Cf Mongolian vowel separator": "\u180e",
    "Cf zero-width space": "\u200b",
    "Cf zero-width joiner": "\u200d",
    "Cf right-to-left override": "\u202e",
    "Cf left-to-right isolate": "\u2066",
    "Cf byte order mark": "\ufeff",
    "Cf interlinear annotation": "\ufff9",
    "Cf language tag": "\U000e0001",
    "Cf tag latin A": "\U000e0041",
    "Cf cancel tag": "\U000e007f",
    "Co private use": "\ue000",
    "Co supplementary private use": "\U000f0000",
    "Cn unassigned": "\u0378",
    "Cn noncharacter U+FFFE": "\ufffe",
    "Cn noncharacter U+FFFF": "\uffff",
    "Cn noncharacter U+FDD0": "\ufdd0",
    "Cn noncharacter U+1FFFE": "\U0001fffe",
    "Cn last code point": "\U0010ffff",
    "Zl line separator": "\u2028",
    "Zp paragraph separator": "\u2029",
    "Hangul choseong filler": "\u115f",
    "Hangul jungseong filler": "\u1160",
    "Hangul filler": "\u3164",
    "halfwidth Hangul filler": "\uffa0",
    "variation selector 1": "\ufe00",
    "variation selector 16": "\ufe0f",
    "variation selector 17": "\U000e0100",
    "Mongolian free variation selector": "\u180b",
    "combining grapheme joiner": "\u034f",
    "Khmer inherent vowel": "\u17b4",
    "blank Braille pattern": "\u2800",
}
"""A representative of each refused class; each goes into a name after ``Agent ``."""


EMOJI_NAME = "\U0001f680" * 80
"""An allowed name wider than every chart's label limit, all of it beyond the BMP: Vega
cuts a wide label by UTF-16 code units, and a cut inside a surrogate pair failed the build."""


def _schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


def test_the_table_is_generated_from_the_pinned_unicode_version() -> None:
    """The committed table is what ``make generate`` makes now (tests/test_generated.py
    holds every generated file to it; here: the version and the shape of the ranges)."""
    import unicodedata2  # the pinned database of the test extra

    assert showable.UNICODE_VERSION == unicodedata2.unidata_version == "17.0.0"
    table = Path(showable.__file__).with_name("_showable_table.py")
    assert table.read_text(encoding="utf-8") == showable.generated_table()
    ranges = showable.RANGES
    assert all(lo <= hi for lo, hi in ranges)
    assert all(a[1] + 1 < b[0] for a, b in zip(ranges, ranges[1:], strict=False))


def test_the_verdict_does_not_depend_on_the_running_python() -> None:
    """A character newer than this Python's Unicode is judged by the pinned table alone."""
    shaking_face = "\U0001fae8"  # Unicode 15.0; Python 3.11's unicodedata says Cn
    assert showable.first_unshowable(shaking_face) is None
    if unicodedata.unidata_version < "15":
        assert unicodedata.category(shaking_face) == "Cn"
    # and an old refusal stays a refusal whatever this Python thinks of the category
    assert showable.first_unshowable("\u3164") == 0
    assert unicodedata.category("\u3164") == "Lo"


@pytest.mark.parametrize("label", ALLOWED)
def test_each_allowed_class_passes_every_reader(label: str) -> None:
    name = f"Agent {ALLOWED[label]}"
    assert showable.first_unshowable(name) is None
    assert SystemInfo(name=name).name == name
    jsonschema.validate({"name": name}, _schema()["$defs"]["SystemInfo"] | _defs())
    assert shown(name) == name
    assert typed_text(name) == name


@pytest.mark.parametrize("label", REFUSED)
def test_each_refused_class_is_refused_by_every_reader(label: str) -> None:
    name = f"Agent {REFUSED[label]}"
    assert showable.first_unshowable(name) == 6
    with pytest.raises(ValidationError, match="string_pattern_mismatch|should match pattern"):
        SystemInfo(name=name)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": name}, _schema()["$defs"]["SystemInfo"] | _defs())
    assert shown(name) == "Agent \ufffd"
    if REFUSED[label] not in "\t\n":
        with pytest.raises(ActionError, match=f"U\\+{ord(REFUSED[label]):04X} at position 6"):
            typed_text(name)


def _defs() -> dict[str, Any]:
    return {"$defs": _schema()["$defs"]}


def test_a_paragraph_allows_line_breaks_and_nothing_else_more() -> None:
    text = "line one\nline two \u6771"
    assert SystemInfo(name="x", description=text).description == text
    assert showable.first_unshowable(text, also="\n") is None
    with pytest.raises(ValidationError):
        SystemInfo(name="x", description="a\n\ufffe")
    with pytest.raises(ValidationError):
        SystemInfo(name="x", description="a\r\nb")  # only the newline, not CR


def test_a_trailing_newline_is_refused_by_pydantic_and_the_json_schema_alike() -> None:
    """Python's ``$`` matches before a final newline; the schema's rule does not use ``$``."""
    with pytest.raises(ValidationError):
        SystemInfo(name="Agent\n")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": "Agent\n"}, _schema()["$defs"]["SystemInfo"] | _defs())


def test_the_json_schema_rule_reads_the_same_in_ecma_262() -> None:
    """Node's RegExp with the ``u`` flag (JSON Schema 2020-12) agrees on every range edge."""
    node = shutil.which("node")
    assert node is not None, "nodejs (.ci/apt-packages) is not installed"
    probes = sorted(
        {c for lo, hi in showable.RANGES for c in (lo - 1, lo, hi, hi + 1) if 0 <= c < 0x110000}
        - set(range(0xD800, 0xE000))  # a lone surrogate is no JavaScript code point
    )
    script = (
        "const fs=require('fs');const s=JSON.parse(fs.readFileSync(process.argv[1]));"
        "const probes=JSON.parse(fs.readFileSync(0));const out={};"
        "for(const d of ['ShownText','ShownParagraph']){"
        "const re=new RegExp(s.$defs[d].not.pattern,'u');"
        "out[d]=probes.map(c=>re.test(String.fromCodePoint(c))?0:1);}"
        "process.stdout.write(JSON.stringify(out));"
    )
    done = subprocess.run(
        [node, "-e", script, str(SCHEMA_PATH)],
        input=json.dumps(probes),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    verdicts = json.loads(done.stdout)
    for name, also in (("ShownText", ""), ("ShownParagraph", "\n")):
        mine = [int(showable.first_unshowable(chr(c), also=also) is None) for c in probes]
        assert verdicts[name] == mine
        assert sum(mine) > 1000 and len(mine) - sum(mine) > 500  # both kinds were probed


def test_every_allowed_code_point_passes_pydantic_and_python_re() -> None:
    """The table, pydantic's Rust regex and Python's ``re`` agree on the whole table."""
    every = "".join(chr(c) for lo, hi in showable.RANGES for c in range(lo, hi + 1))
    assert showable.first_unshowable(every) is None
    for start in range(0, len(every), showable_chunk := 2000):
        assert SystemInfo(name="x", description=every[start : start + showable_chunk])


def test_templates_never_output_an_unshowable_character() -> None:
    """Whatever reaches a template is made showable on output; layout whitespace is kept."""
    env = environment(ROOT / "site" / "templates")
    page = env.from_string("<p>{{ x }}</p>\n<pre>{{ y }}</pre>").render(
        x="a\ufffeb\x1b[31m\U000e0041", y="line\n\tline"
    )
    assert page == "<p>a\ufffdb\ufffd[31m\ufffd</p>\n<pre>line\n\tline</pre>"


def test_no_refused_class_reaches_the_chart_renderer() -> None:
    """vl-convert (in its own process) survives every refused class in a label."""
    spec = {
        "data": {"values": [{"a": i, "b": f"Agent {c}"} for i, c in enumerate(REFUSED.values())]},
        "mark": "bar",
        "encoding": {
            "x": {"field": "b", "type": "nominal"},
            "y": {"field": "a", "type": "quantitative"},
        },
    }
    assert "\ufffe" not in json.dumps(shown_strings(spec), ensure_ascii=False)
    code = (
        "import sys\n"
        "from effectbench.site._render import render_chunk\n"
        "(svg,) = render_chunk([sys.stdin.buffer.read()])\n"
        "print(svg.startswith('<svg'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(spec).encode(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    assert done.stdout.strip() == b"True"


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One bundle per refused class (named ``Agent <char>``), one whose name holds every
    allowed class, verified and built into a real site (previews allowed)."""
    base = tmp_path_factory.mktemp("showable")
    subs = base / "submissions"
    template = make_bundle(base / "template", "screen_only", declare_baseline=False)
    folders: dict[str, str] = {}
    for i, (label, char) in enumerate(REFUSED.items()):
        folder = subs / f"2026-04-01_refused-{i:02d}"
        shutil.copytree(template, folder)
        data = read_submission(folder)
        data["system"]["name"] = f"Agent {char}"
        write_submission(folder, data)
        folders[label] = folder.name
    good = subs / "2026-04-02_every-allowed-class"
    shutil.copytree(template, good)
    data = read_submission(good)
    everything = "".join(ALLOWED.values())
    data["system"]["name"] = everything[:80]
    data["system"]["description"] = everything + "\n" + everything
    write_submission(good, data)
    wide = make_bundle(
        subs / "2026-04-03_emoji-wide", "effect_verified", declare_baseline=False
    )  # other rows than the template's: not a copy of the other preview
    data = read_submission(wide)
    data["system"]["name"] = EMOJI_NAME
    write_submission(wide, data)
    reports = {Path(r.path).name: r for r in verify_path(subs, VerifyOptions(allow_unsigned=True))}
    root = site_root(base, [])
    out = base / "public"
    summary = build_site(subs, out, root=root, cache_dir=base / "cache", allow_unsigned=True)
    return {
        "folders": folders,
        "reports": reports,
        "good": good.name,
        "wide": wide.name,
        "name": everything[:80],
        "out": out,
        "summary": summary,
    }


@pytest.mark.parametrize("label", REFUSED)
def test_verify_refuses_each_refused_class_with_structure_text(
    named: dict[str, Any], label: str
) -> None:
    report = named["reports"][named["folders"][label]]
    assert not report.accepted
    found = [f for c in report.checks for f in c.findings if f.check == "structure.text"]
    (finding,) = found
    assert finding.field == "system.name"
    assert f"U+{ord(REFUSED[label]):04X} at position 6" in finding.message


def test_the_ufffe_name_is_refused_and_the_site_still_builds(named: dict[str, Any]) -> None:
    """The attack of issue 19: ``Agent \\ufffe`` used to abort every build in vl-convert."""
    report = named["reports"][named["folders"]["Cn noncharacter U+FFFE"]]
    assert "structure.text" in report.finding_ids()
    summary = named["summary"]
    assert summary.n_refused == len(REFUSED) and summary.n_preview == 2
    refused = (named["out"] / "refused.html").read_text(encoding="utf-8")
    for folder in named["folders"].values():
        assert f'<tr data-slug="{folder}">' in refused
    for char in REFUSED.values():
        if char not in "\t\n":
            for page in named["out"].rglob("*.html"):
                assert char not in page.read_text(encoding="utf-8"), (char, page)


def test_every_allowed_class_is_verified_shown_and_drawn(named: dict[str, Any]) -> None:
    report = named["reports"][named["good"]]
    assert "structure.text" not in report.finding_ids()
    assert report.status.value == "preview"
    page = (named["out"] / "submissions" / f"{named['good']}.html").read_text(encoding="utf-8")
    assert "\u6771\u4eac\u5927\u5b66" in page and "\U0001fae8" in page
    charts = (named["out"] / "charts.html").read_text(encoding="utf-8")
    svgs = re.findall(r"<svg.*?</svg>", charts, flags=re.S)
    assert any(named["name"][:4] in svg for svg in svgs)  # the name reached vl-convert


def test_a_name_of_eighty_emoji_is_drawn_not_fatal(named: dict[str, Any]) -> None:
    """The allowed name that Vega cannot cut still gets its row, its page and its charts."""
    report = named["reports"][named["wide"]]
    assert report.status.value == "preview" and "structure.text" not in report.finding_ids()
    index = (named["out"] / "index.html").read_text(encoding="utf-8")
    assert f'data-slug="{named["wide"]}"' in index and EMOJI_NAME in index
    charts = (named["out"] / "charts.html").read_text(encoding="utf-8")
    svgs = re.findall(r"<svg.*?</svg>", charts, flags=re.S)
    assert any("\U0001f680" * 8 in svg for svg in svgs)
