"""The shape of the code (docs/ARCHITECTURE.md), checked: the layers, and modules small enough to read."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_imports_follow_the_layers():
    """``lint-imports`` checks the contracts in ``.importlinter``: no module imports from a layer above it."""
    command = shutil.which("lint-imports")
    if command is None:
        pytest.fail("lint-imports is missing: pip install -r requirements.txt")
    run = subprocess.run([command, "--no-cache", "--config", str(ROOT / ".importlinter")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(ROOT),
                                                                            "PATH": str(Path(sys.executable).parent)})
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]

