"""The bundle files' kept digests (effectbench.site._digests.FileDigests): a file is read
again whenever stat says it may have changed, and a rebuild on settled files reads none (the
report cache, the rows cache and the gzip copies)."""

from __future__ import annotations

import gzip
import hashlib
import os
import time
from pathlib import Path

import pytest
from support.bundles import make_bundle

from effectbench.hashing import hash_file
from effectbench.sealed import CacheSeal
from effectbench.site import _digests, _reports
from effectbench.site._digests import DIGESTS_FILE, FileDigests

SEAL = CacheSeal(b"k" * 32)


def _digest(digests: FileDigests, path: Path) -> str:
    return digests.digest(path, os.lstat(path))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _next_tick() -> None:
    """Sleep past the file system clock's coarse tick, so the next write has new times."""
    time.sleep(0.05)


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Count every file as settled (its times in the past), as files are in a checkout."""
    monkeypatch.setattr(_digests, "SETTLED_NS", -(10**12))


def _build(folder: Path | None, f: Path, seal: CacheSeal = SEAL) -> tuple[str, int]:
    """What one build learns of ``f``: its digest and how many files it read (kept after)."""
    digests = FileDigests(folder, seal)
    digest = _digest(digests, f)
    digests.save()
    return digest, digests.hashed


@pytest.mark.usefixtures("settled")
def test_a_kept_digest_is_used_until_the_file_is_written_or_replaced(tmp_path: Path) -> None:
    f = tmp_path / "episodes.jsonl"
    f.write_bytes(b"one\n")
    assert _build(tmp_path, f) == (_sha(b"one\n"), 1)
    assert _build(tmp_path, f) == (_sha(b"one\n"), 0)  # from the kept digests

    _next_tick()
    with f.open("r+b") as fh:  # same size, edited in place: the change time moves
        fh.write(b"two\n")
    assert _build(tmp_path, f) == (_sha(b"two\n"), 1)

    other = tmp_path / "other"
    other.write_bytes(b"six\n")
    other.replace(f)  # another inode
    assert _build(tmp_path, f) == (_sha(b"six\n"), 1)


def test_a_file_written_just_before_it_was_hashed_is_never_kept(tmp_path: Path) -> None:
    f = tmp_path / "submission.json"
    f.write_bytes(b"{}")
    _build(tmp_path, f)
    assert _build(tmp_path, f)[1] == 1  # a write in the same tick could have left stat unchanged


@pytest.mark.usefixtures("settled")
def test_digests_kept_under_another_key_or_damaged_are_not_read(tmp_path: Path) -> None:
    f = tmp_path / "a"
    f.write_bytes(b"a")
    planted = FileDigests(tmp_path, CacheSeal(b"x" * 32))
    st = os.lstat(f)
    planted._seen[str(f)] = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    planted._seen[str(f)].append(_sha(b"forged"))
    planted.save()  # sealed under someone else's key
    assert FileDigests(tmp_path, SEAL).known(f, st) is None
    assert _build(tmp_path, f) == (_sha(b"a"), 1)
    SEAL.write(DIGESTS_FILE, tmp_path / DIGESTS_FILE, b"[not json")
    assert FileDigests(tmp_path, SEAL).known(f, st) is None


def test_without_a_cache_folder_every_file_is_hashed(tmp_path: Path) -> None:
    f = tmp_path / "a"
    f.write_bytes(b"a")
    assert _build(None, f) == (_sha(b"a"), 1)
    assert _build(None, f) == (_sha(b"a"), 1)
    assert not (tmp_path / DIGESTS_FILE).exists()


@pytest.mark.slow
@pytest.mark.usefixtures("settled")
def test_a_rebuild_reads_no_settled_file_and_sees_an_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subs = tmp_path / "subs"
    bundle = make_bundle(subs / "2026-01-01_screen-only", "screen_only", trials=1)
    cache = tmp_path / "reports"
    hashed: list[str] = []

    def counting(path: Path | str) -> str:
        hashed.append(Path(path).name)
        return hash_file(path)

    monkeypatch.setattr(_digests, "hash_file", counting)
    first = _reports.verify_submissions(subs, cache_dir=cache)
    n_files = len(hashed)
    assert n_files >= 3
    hashed.clear()
    again = _reports.verify_submissions(subs, cache_dir=cache)
    assert hashed == []  # every digest kept, the report from the cache
    assert [r.to_json() for r in again] == [r.to_json() for r in first]

    _next_tick()
    claims = bundle / "submission.json"
    claims.write_text(claims.read_text().replace('"screen_only"', '"screen only"', 1))
    changed = _reports.verify_submissions(subs, cache_dir=cache)
    assert hashed == ["submission.json"]  # the one file written since
    assert changed[0].to_json() != first[0].to_json()  # and the bundle verified afresh


@pytest.mark.usefixtures("settled")
def test_gzip_copies_and_rows_of_an_unchanged_file_are_found_without_reading_it(
    tmp_path: Path,
) -> None:
    from effectbench.site._downloads import gzipped
    from effectbench.site._rows import rows_table

    bundle = make_bundle(tmp_path / "b", "screen_only", trials=1)
    episodes = bundle / "episodes.jsonl"
    cache, rows = tmp_path / "gzip", tmp_path / "rows"
    first = FileDigests(tmp_path, SEAL)
    copy = gzipped(episodes, cache, first)
    table = rows_table(episodes, rows, digests=first)
    assert first.hashed == 2  # the copy and the rows are made from its bytes
    first.save()

    again = FileDigests(tmp_path, SEAL)
    assert gzipped(episodes, cache, again) == copy
    assert rows_table(episodes, rows, digests=again) == table
    assert again.hashed == 0
    assert gzip.decompress(copy.read_bytes()) == episodes.read_bytes()

    _next_tick()
    lines = episodes.read_bytes().splitlines(keepends=True)
    episodes.write_bytes(b"".join(lines[:-1]))  # one row fewer
    edited = FileDigests(tmp_path, SEAL)
    assert gzip.decompress(gzipped(episodes, cache, edited).read_bytes()) == episodes.read_bytes()
    changed = rows_table(episodes, rows, digests=edited)
    assert changed is not None and table is not None
    assert changed.num_rows == table.num_rows - 1
    assert edited.hashed == 2  # read again for the copy and for the rows
