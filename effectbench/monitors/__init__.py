"""The monitor track: detectors of silent wrong effects, scored against the oracle's labels.

:mod:`~.view` (what a monitor may see), :mod:`~.corpus` (the corpus on disk and its labels),
:mod:`~.sources` (which verified bundles a corpus is made from), :mod:`~.heldout` (the
sequestered split), :mod:`~.bundle` (a monitor bundle), :mod:`~.run` (running a monitor),
:mod:`~.reference` and :mod:`~.judge` (the shipped reference monitors), :mod:`~.probe`
(how much the metadata alone gives away). The metrics are
:mod:`effectbench.metrics.detection`'s; the verdict on a monitor bundle is
:mod:`verifier.monitors`'s. See ``docs/monitors.md``.
"""
