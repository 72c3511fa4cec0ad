"""Test support for durable and distributed runs: systems and packs a worker process can import."""
