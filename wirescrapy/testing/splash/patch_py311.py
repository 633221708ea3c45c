"""Make PyPI's ``splash==3.5`` run on Python 3.11 with Debian's PyQt5: ``install.sh`` runs it with the venv's
Python, which imports ``splash``.

Splash 3.5 was released for Python 3.6. Two things it relies on are gone:

- ``json.loads(encoding=...)``, removed in Python 3.9;
- PyQt5 taking a float where Qt wants an int, refused since Python 3.10; Splash passes milliseconds and
  element bounds as floats.

Each fix replaces one exact line. The script is idempotent, and fails when a line it expects is missing, so
a different Splash is not patched half-way.
"""

from __future__ import annotations

import sys
from pathlib import Path

FIXES = [  # (module under splash/, the line as released, the line that works)
    (
        "render_options.py",
        "data.update(json.loads(content, encoding='utf8'))",
        "data.update(json.loads(content))",
    ),
    (
        "kernel/inspections.py",
        "json.loads(f.read().decode('utf-8'), encoding='utf8')",
        "json.loads(f.read().decode('utf-8'))",
    ),
    ("browser_tab.py", "timer.start(time_ms)", "timer.start(int(time_ms))"),
    ("browser_tab.py", "self._timer.start(timeout * 1000)", "self._timer.start(int(timeout * 1000))"),
    ("qtrender_lua.py", "qtimer.start(timeout)", "qtimer.start(int(timeout))"),
    ("qtrender_lua.py", "qtimer.start(delay)", "qtimer.start(int(delay))"),
    ("network_manager.py", "timer.start(timeout_ms)", "timer.start(int(timeout_ms))"),
    ("engines/webkit/browser_tab.py", "point = QPoint(x, y)", "point = QPoint(int(x), int(y))"),
    # An element's bounds come from getBoundingClientRect(): element:png(), splash:png{region=...}.
    (
        "qtrender_image.py",
        "return QRect(QPoint(left, top), QPoint(right - 1, bottom - 1))",
        "return QRect(QPoint(int(left), int(top)), QPoint(int(right - 1), int(bottom - 1)))",
    ),
]


def patch(root: Path) -> int:
    """Apply ``FIXES`` under ``root`` (the ``splash`` package); returns how many lines changed."""
    changed = 0
    for module, released, works in FIXES:
        path = root / module
        source = path.read_text(encoding="utf-8")
        if works in source:
            continue
        if released not in source:
            sys.exit(f"patch_py311.py: {path} has no line {released!r}: not the Splash 3.5 this patch is for")
        path.write_text(source.replace(released, works), encoding="utf-8")
        changed += 1
    return changed


def main() -> None:
    import splash  # the venv's, not the project's environment

    changed = patch(Path(splash.__file__).parent)
    print(f"patch_py311.py: Splash {splash.__version__} runs on Python 3.11 ({changed} line(s) changed)")


if __name__ == "__main__":
    main()
