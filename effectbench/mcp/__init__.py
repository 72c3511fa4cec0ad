"""One EffectBench episode as a Model Context Protocol server (stdio).

``effectbench mcp --pack clinic --substrate web --task TASK --trial N`` starts a
server whose tools are the episode: ``task`` (goal, declared effect, referral),
``screenshot``, the computer actions under Anthropic's names, and ``report``.
The process boundary is what makes "screen only" hold: the client gets images
and texts, never the page, the DOM, the database or the oracle. The row is
judged by the harness and written to the record directory, never to the client.
See :mod:`.server`.
"""
