"""One EffectBench episode as a Model Context Protocol server (stdio).

``effectbench mcp --pack clinic --substrate web --task TASK --trial N`` starts a
server whose tools are the episode: ``task`` (goal, declared effect, referral),
``screenshot``, the computer actions under one vendor's names (Anthropic's by
default; ``--vocabulary``), the product's readback when the task declares its
effect, and the endings ``report`` and ``abort``.
The process boundary is what makes "screen only" hold: the client gets images
and texts, never the page, the DOM, the database or the oracle. The row is
judged by the harness and kept in the record directory (one file per attempt,
never overwritten), never shown to the client.
See :mod:`.server`.
"""

VOCABULARY_NAMES = ("anthropic", "openai", "computer_13")
"""The action vocabularies ``effectbench mcp --vocabulary`` serves (:mod:`.vocabulary`)."""
