"""Helpers the test modules share (no tests here): real bundles, sites, rows and screens.

Test modules import from this package, never from one another.
"""
