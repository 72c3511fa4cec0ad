"""Test support for the inspect_ai integration (scripted mock policies)."""
