"""The shape of the code (docs/ARCHITECTURE.md), checked: the layers, and modules small enough to read."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A module a person reads in one sitting. Counted in statements, so that the formatter's layout of a call does
# not move it. A warning sign only: a module is split by responsibility, never to meet this number.
MAX_MODULE_STATEMENTS = 300


def test_imports_follow_the_layers():
    """``lint-imports`` checks the contracts in ``.importlinter``: no module imports from a layer above it, no
    crawler code imports ``wirescrapy.testing``, and the tests and the benchmarks import nothing of each
    other."""
    command = shutil.which("lint-imports")
    if command is None:
        pytest.fail("lint-imports is missing: pip install -r requirements.txt")
    run = subprocess.run(
        [command, "--no-cache", "--config", str(ROOT / ".importlinter")],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent)},
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def statements(path: Path) -> int:
    return sum(isinstance(node, ast.stmt) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def test_no_module_is_too_long_to_read():
    long = {
        str(path.relative_to(ROOT)): count
        for path in sorted((ROOT / "wirescrapy").rglob("*.py"))
        if (count := statements(path)) > MAX_MODULE_STATEMENTS
    }
    assert not long, f"modules over {MAX_MODULE_STATEMENTS} statements: {long}"


def test_request_meta_keys_are_defined_in_one_module():
    """Every ``wire_*`` ``Request.meta`` key is a name of ``wirescrapy/harvester/meta.py``; the rest import
    it."""
    key = re.compile(r"""["']wire_[a-z_]+["']""")
    owner = ROOT / "wirescrapy" / "harvester" / "meta.py"
    spelled = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("wirescrapy", "spiders", "benchmarks")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != owner
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if key.search(line)
    ]
    assert not spelled, f"meta keys spelled out instead of imported from harvester/meta.py: {spelled}"


def test_a_harvester_job_starts_without_the_link_analysis():
    """Every ``scrapy`` command imports every command module, and a harvester job that resumes a batch
    planned ahead plans nothing: scipy, the manager's run and tldextract load where they are used, not at
    the start of every job (``manager/__init__.py``), where the crawl's slowest site waits for them."""
    heavy = ("scipy", "tldextract", "wirescrapy.manager.run")
    script = (
        "import sys\n"
        "from scrapy.cmdline import _get_commands_dict\n"
        "from scrapy.utils.project import get_project_settings\n"
        "_get_commands_dict(get_project_settings(), True)\n"
        "import spiders.harvester\n"
        f"print(','.join(name for name in {heavy!r} if name in sys.modules))\n"
    )
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "settings.test"}
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "", f"loaded at a harvester job's start: {run.stdout.strip()}"
