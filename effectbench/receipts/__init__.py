"""Effect receipts: each scored episode's evidence, written by the harness, checked by the verifier.

* :mod:`.model`: the receipt's JSON contract (one line of a bundle's ``receipts.jsonl``);
* :mod:`.recorder`: the env wrapper that logs every action, and key frames (lossless WebP,
  named by their sha256);
* :mod:`.collect`: the hook the runner (and the inspect integration) calls while an
  episode runs;
* :mod:`.derive`: what follows from rules (effect readings, collateral marks, the truth
  table's row), applied once by the harness and again by the verifier;
* :mod:`.files`: receipts and frames on disk (bundles, journals, MCP record folders).
"""
