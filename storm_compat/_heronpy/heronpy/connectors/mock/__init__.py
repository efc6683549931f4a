"""Test sources: ``arraylooper.ArrayLooper``."""
