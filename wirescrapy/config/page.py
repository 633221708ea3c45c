"""``docs/settings.md``, rendered from the settings' table (``table.SETTINGS``) and the WIRE keys that have no
setting (``wirekeys.NOT_IMPLEMENTED``). ``python -m wirescrapy.config > docs/settings.md`` writes it, and
``tests/test_config.py`` keeps the page equal to the code."""

from __future__ import annotations

from .table import SETTINGS, Setting
from .wirekeys import NOT_IMPLEMENTED


def _format_default(spec: Setting) -> str:
    value = spec.default
    if spec.name == "WIRE_BLOCKED_IPS":
        return "non-public ranges (see `wirescrapy/config/table.py`)"
    if isinstance(value, (list, dict)) and len(str(value)) > 60:
        return f"{len(value)} entries (see `wirescrapy/config/table.py`)"
    if isinstance(value, str):
        return f"`{value}`" if value else "empty"
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10_000:
        return f"{value:,}"
    return f"`{value!r}`" if isinstance(value, (list, dict)) else str(value)


def settings_table() -> str:
    """The settings table (markdown): one row per setting."""
    lines = ["| Setting | WIRE name | Read by | Default | Meaning |", "|---|---|---|---|---|"]
    for spec in SETTINGS:
        wire = f"`{spec.wire}`" if spec.wire else "(new)"
        lines.append(f"| `{spec.name}` | {wire} | {spec.component} | {_format_default(spec)} | {spec.doc} |")
    return "\n".join(lines)


SETTINGS_PAGE_HEADER = """\
# Settings

wirescrapy's settings are Scrapy settings named `WIRE_…`, most of them a variable of WIRE's configuration
(its WIRE name below). Set one with `-s NAME=VALUE` on the command line, in a settings module
(`settings/default.py`, or your own in `settings/`), or per Scrapyd job (`-d setting=NAME=VALUE`). A `WIRE_*`
name that is no setting, or a value a setting cannot take, stops the run at its start, in one line.

This page is generated from `wirescrapy/config/table.py` by `python -m wirescrapy.config > docs/settings.md`;
`tests/test_config.py` keeps the two equal.
"""


def settings_page() -> str:
    """``docs/settings.md``: how to set a setting, the settings table, and the WIRE keys with no setting."""
    keys = "\n".join(f"- `{key}`: {why}." for key, why in NOT_IMPLEMENTED.items())
    return f"{SETTINGS_PAGE_HEADER}\n{settings_table()}\n\n## WIRE keys with no setting\n\n{keys}\n"
