"""The verifier: the trust boundary between a pull request and the leaderboard.

It re-scores every submitted episode row with the engine's own truth table,
recomputes every claimed number, checks the pack, the spec major and the
Sigstore signature, and refuses whatever does not reproduce. It only reads
and judges; producing and signing bundles is the engine's
(:mod:`effectbench.produce`, :mod:`effectbench.signatures`).

Modules, in the order a submission meets them:

* :mod:`verifier.api`: the entry points and the list of steps, one per family;
* :mod:`verifier.inputs`: opening a bundle folder or an upstream document safely;
* :mod:`verifier.spec`, :mod:`verifier.pack`: the declaration (``spec``, ``pack``);
* :mod:`verifier.scan`, :mod:`verifier.rows`, :mod:`verifier.rowschema`,
  :mod:`verifier.rescore`: every row (``structure``, ``pack``, ``rescore``);
* :mod:`verifier.claims`: the claimed results block (``claims``);
* :mod:`verifier.reproduce`: re-running a shipped baseline (``reproduce``);
* :mod:`verifier.signature`: the signature step (``signature``);
* :mod:`verifier.report`: findings per family, the status rule, the report;
* :mod:`verifier.limits`: size limits.

Check ids come from the registry :class:`effectbench.findings.CheckId`.
"""
