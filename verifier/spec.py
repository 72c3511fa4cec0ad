"""The ``spec`` family: the submission's SPEC version is comparable with this leaderboard's."""

from __future__ import annotations

import re

from effectbench._version import SPEC_VERSION
from effectbench.findings import CheckId
from verifier.report import FindingSink

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)


def parse_semver(text: str) -> tuple[int, int, int] | None:
    """Return ``(major, minor, patch)`` of a semantic version, or None if it is not one."""
    m = _SEMVER.match(text)
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def check_spec(version: str, sink: FindingSink, file: str, field: str = "spec_version") -> None:
    """Check that the submission's SPEC version is comparable with this leaderboard's.

    The same major (SPEC section 8: another major measures something else) and a
    minor no newer than ours (the leaderboard must be updated first).
    """
    ours = parse_semver(SPEC_VERSION)
    assert ours is not None
    theirs = parse_semver(version)
    if theirs is None:
        sink.emit(
            CheckId.SPEC_SEMVER,
            f"spec version {version!r} is not a semantic version (MAJOR.MINOR.PATCH)",
            file,
            None,
            field,
        )
        return
    if theirs[0] != ours[0]:
        sink.emit(
            CheckId.SPEC_MAJOR,
            f"SPEC {version} is not comparable with this leaderboard's SPEC {SPEC_VERSION}: "
            f"a different major version measures something else (SPEC section 8); "
            f"re-run under SPEC {ours[0]}.x",
            file,
            None,
            field,
        )
    elif theirs[1] > ours[1]:
        sink.emit(
            CheckId.SPEC_MINOR_NEWER,
            f"SPEC {version} is newer than this leaderboard's SPEC {SPEC_VERSION}; "
            "update the leaderboard (effectbench) before verifying this submission",
            file,
            None,
            field,
        )
