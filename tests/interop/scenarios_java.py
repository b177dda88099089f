"""Interop scenarios: (being written)."""
