"""Inference forms: one module per form behind one protocol (``forms/base.py``), reached through ``forms/registry.py``."""
