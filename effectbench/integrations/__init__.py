"""Integrations with other evaluation harnesses (each an optional extra)."""
