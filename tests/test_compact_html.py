"""The themed pages' indentation is dropped (effectbench.site._mkdocs.compact_html), and the
white space of blocks where it is content (pre, textarea) is kept as written."""

from __future__ import annotations

import pytest

from effectbench.site._mkdocs import KEPT_AS_WRITTEN, compact_html

PAGE = "<html>\n  <body>\n\n    <p>a\n      b</p>\n\t<td>1</td>\r\n  </body>\n</html>\n"


def _general(html: str) -> str:
    """The one replacement that looks for kept blocks everywhere (what pages with one take)."""
    return KEPT_AS_WRITTEN.sub(lambda m: m.group(1) or "\n", html)


def test_a_page_without_kept_blocks_loses_its_indentation() -> None:
    assert compact_html(PAGE) == "<html>\n<body>\n<p>a\nb</p>\n<td>1</td>\r\n</body>\n</html>\n"
    assert compact_html(PAGE) == _general(PAGE)


@pytest.mark.parametrize(
    "block",
    [
        "<pre>\n  x\n\n    y\n</pre>",
        '<PRE class="c">\n  x\n</PRE >',
        "<textarea name=t>\n  keep\n</textarea>",
    ],
)
def test_a_kept_block_keeps_its_white_space_and_the_rest_does_not(block: str) -> None:
    page = PAGE.replace("<p>", block + "\n   <p>", 1)
    out = compact_html(page)
    assert block in out
    assert out == _general(page)
    assert "\n " not in out.replace(block, "")


def test_a_tag_that_only_starts_like_pre_changes_nothing() -> None:
    page = PAGE.replace("<p>", "<prefix>\n   <p>", 1)
    assert compact_html(page) == _general(page)
    assert "\n " not in compact_html(page)
