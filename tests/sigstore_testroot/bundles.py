"""Real submission bundles for signature tests: a shipped baseline run on MockMed."""

from __future__ import annotations

import functools
import platform
import shutil
from pathlib import Path

from effectbench import SPEC_VERSION
from effectbench.baselines import get_baseline
from effectbench.bundle import EnvironmentInfo, PackRef, SignerDecl, Submission, SystemInfo
from effectbench.bundle import write_bundle as _write_bundle
from effectbench.manifest import fingerprint
from effectbench.metrics import episode_frame, summarize
from effectbench.packs import get_pack
from effectbench.run.runner import evaluate
from effectbench.schema import EpisodeRecord


@functools.cache
def _run(baseline: str, trials: int) -> tuple[list[EpisodeRecord], str]:
    pack = get_pack("mockmed")
    run = evaluate(get_baseline(baseline, pack), pack, trials=trials)
    return run.rows, fingerprint(pack.manifest())


def write_bundle(
    out_dir: Path,
    *,
    identity: str | None,
    issuer: str | None,
    baseline: str = "screen_only",
    trials: int = 1,
    readme: str | None = "# Demo submission\n\nA shipped baseline, for signature tests.\n",
) -> Path:
    """Write a valid bundle of ``baseline`` declaring signer (identity, issuer) into ``out_dir``."""
    rows, pack_fingerprint = _run(baseline, trials)
    signer = SignerDecl(identity=identity, issuer=issuer) if identity and issuer else None
    submission = Submission(
        spec_version=SPEC_VERSION,
        system=SystemInfo(name=baseline, description="shipped baseline", baseline=baseline),
        signer=signer,
        pack=PackRef(name="mockmed", fingerprint=pack_fingerprint),
        trials_per_task=trials,
        seeds=list(range(trials)),
        environment=EnvironmentInfo(python=platform.python_version(), platform=platform.system()),
        results=summarize(episode_frame(rows)),
    )
    return _write_bundle(out_dir, submission, rows, readme=readme)


def copy_bundle(src: Path, dst: Path) -> Path:
    """Copy a bundle folder exactly (links stay links)."""
    shutil.copytree(src, dst, symlinks=True)
    return dst
