"""The verifier: the trust boundary between a pull request and the leaderboard.

It re-scores every submitted episode row with the engine's own truth table,
recomputes every claimed number, checks the pack, the spec major and the
Sigstore signature, and refuses whatever does not reproduce. It only reads
and judges; producing and signing bundles is the engine's
(:mod:`effectbench.produce`, :mod:`effectbench.signatures`).

Modules, in the order a submission meets them:

* :mod:`verifier.api`: the entry points and the list of steps, one per family;
* :mod:`verifier.inputs`: opening a bundle folder or an upstream document safely;
* :mod:`verifier.spec`, :mod:`verifier.pack`: the declaration (``spec``, ``pack``), the pack
  held to :mod:`verifier.accepted` (the accepted packs of other distributions);
* :mod:`verifier.scan`, :mod:`verifier.rows`, :mod:`verifier.rowschema`,
  :mod:`verifier.rescore`: every row (``structure``, ``pack``, ``rescore``);
* :mod:`verifier.receipts`: every row's receipt derived again (``receipt``), the frames'
  image formats and pixel bounds checked by :mod:`verifier.frames`;
* :mod:`verifier.claims`: the claimed results block (``claims``);
* :mod:`verifier.signature`: the signature step (``signature``);
* :mod:`verifier.reproduce`: re-running a shipped baseline (``reproduce``), the reference
  bundles it may rank listed by :mod:`verifier.references`, a re-run kept as a reproduction
  record by :mod:`verifier.records`;
* :mod:`verifier.instances`: a generated pack's instance drawn again from the bundle's seed
  (``pack.instance_*``), its commitment and beacon round checked by :mod:`verifier.commitment`;
* :mod:`verifier.ranking`: what is checked across bundles (copies, withdrawals: ``ranking``);
* :mod:`verifier.blindness`: each pack's published blindness record (``make generate``),
  by which a board of a pack whose agent view or screens leak the category ranks nothing;
* :mod:`verifier.ledger`: the verification ledger: the board CI's verdicts as signed
  verification summaries in a Merkle tree, which a build may take instead of verifying again;
* :mod:`verifier.report`: findings per family, the status rule, the report;
* :mod:`verifier.limits`: size limits;
* :mod:`verifier.pr`: the pull-request workflow's step (the changed bundles, their summary);
* :mod:`verifier.corpus`, :mod:`verifier.monitors`: the monitor track: the board's corpus,
  made from verified bundles only, and the verdict on a monitor bundle (its scores cover the
  corpus; its metrics recomputed);
* :mod:`verifier.monitor_references`: the maintainers' list of reference monitor bundles, the
  only unsigned monitor bundles ranked (as :mod:`verifier.references` for submissions).

Check ids come from the registry :class:`effectbench.findings.CheckId`.
"""
