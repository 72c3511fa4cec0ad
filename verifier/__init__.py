"""The verifier: the trust boundary between a pull request and the leaderboard.

It re-scores every submitted episode row with the engine's own truth table,
recomputes every claimed number, checks the pack, the spec major and the
Sigstore signature, and refuses whatever does not reproduce.
"""
