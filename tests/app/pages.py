"""Helpers for the AppTests: where the app's entry script is."""

from __future__ import annotations

from pathlib import Path

APP = str(Path(__file__).resolve().parents[2] / "app.py")
"""app.py, for ``AppTest.from_file(APP)``."""
