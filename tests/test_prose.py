"""No measured figures in the package's code: they go stale there. Figures live in
``benchmarks/README.md``, with the command that measures them again; the history of a choice goes in its
commit's body.

Every ``.py`` and ``.c`` file under ``wirescrapy/`` is read whole (docstrings, comments, settings' help and
log messages alike) for the shapes a measurement takes: a ratio ("1.06×", "1.06-1.08 x", "×3.2", "100 times
slower"), a share ("90.3 %"), a time ("132.5 s", "30 ms", "158 s") and a date ("2026-11-27"). A constant of
a contract that has one of those shapes is listed in ``ALLOWED``, with the exact phrase and the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "wirescrapy"

FIGURES = re.compile(
    "|".join(  # noqa: FLY002 (one alternative a line, each with its comment)
        [
            # ratios: "1.06×", "3×", "1.06-1.08 x", "×3.2"; a product in a formula is spaced: "0.5 × (1 − k)"
            r"\b\d+(?:\.\d+)?(?:\s?[-–]\s?\d+(?:\.\d+)?)?×",
            r"\b\d+\.\d+(?:\s?[-–]\s?\d+\.\d+)?\s?x\b",
            r"×\d",
            (
                r"\b\d+(?:\.\d+)?(?:\s?[-–]\s?\d+(?:\.\d+)?)? times "
                r"(?:as|faster|slower|more|fewer|less|longer|shorter|smaller|larger)\b"
            ),
            # shares: "90.3 %", "1%", "0.1 ‰"; not the formats "{x:.1%}" and "HTTP/1.1 %s", nor CSS's "100%;"
            r"(?<![:.\d])\b\d+(?:\.\d+)?\s?(?:%(?![};%\w(])|‰)",
            # times: with a decimal point, in ms or µs, or of 100 s and more; whole seconds ("15 s") are fine
            r"\b\d+\.\d+(?:\s?[-–]\s?\d+\.\d+)?\s?(?:s|ms|µs|min)\b",
            r"\b\d+(?:\s?[-–]\s?\d+)?\s?(?:ms|µs)\b",
            r"\b\d{3,}\s?s\b",
            # approximate sizes and rates: "about 2 GiB", "~30 bytes"; an exact one is a format's contract
            r"(?:about|around|roughly|nearly|~)\s?\d+(?:[.,]\d+)?\s?(?:[KMGT]i?B|kB|bytes?)\b",
            r"\b\d+(?:[.,]\d+)?\s?[KMG]i?B (?:on the wire )?(?:for|per|a|an) ",
            # dates: when something was measured or changed
            r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b",
        ]
    )
)

# (file under the repository, the exact phrase, why it may stay)
ALLOWED = [
    (
        "wirescrapy/extensions.py",
        "``scrapy.utils.defer._DEFER_DELAY`` (0.1 s)",
        "Scrapy's own constant: the delay CallbackTurn takes away",
    ),
    (
        "wirescrapy/gatherer/workers.py",
        "hands the GIL to a waiting thread after 5 ms",
        "Python's default switch interval (sys.getswitchinterval), which SWITCH_INTERVAL lowers",
    ),
    (
        "wirescrapy/seeder/sitemaps.py",
        "W3C datetime (``2004-10-01``, ``2004-10-01T18:23:17+00:00``",
        "examples of the date format sitemaps use",
    ),
    (
        "wirescrapy/commands/demo.py",
        "(0.2 s between accesses to a site, 0.05 s for large sites)",
        "the waits of settings/test.py, which the demo crawls with",
    ),
    (
        "wirescrapy/testing/hostile.py",
        "<lastmod>2024-01-01</lastmod>",
        "a date in a sitemap that a hostile test server sends",
    ),
    (
        "wirescrapy/harvester/middlewares/fetchlimits.py",
        "1 ms late: a hold's timer",
        "epoll's timeout is in whole milliseconds: the grain TIMER_GRAIN allows for",
    ),
]


def figures(text: str, allowed: list[str]) -> list[tuple[int, str]]:
    """(line, phrase) of every figure in ``text`` outside the ``allowed`` phrases."""
    for phrase in allowed:
        text = text.replace(phrase, re.sub(r"\S", "_", phrase))  # same length, same lines
    return [(text.count("\n", 0, match.start()) + 1, match.group()) for match in FIGURES.finditer(text)]


def sources() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*") if path.suffix in (".py", ".c"))


def test_no_figures_in_the_package():
    found = []
    for path in sources():
        name = path.relative_to(ROOT).as_posix()
        allowed = [phrase for file, phrase, _ in ALLOWED if file == name]
        lines = path.read_text().splitlines()
        found += [
            f"{name}:{line}: {phrase!r} in: {lines[line - 1].strip()}"
            for line, phrase in figures(path.read_text(), allowed)
        ]
    assert not found, (
        "measured figures in the code (move each to benchmarks/README.md with its command; a constant of a "
        "contract goes in ALLOWED with its reason):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(("file", "phrase"), [(file, phrase) for file, phrase, _ in ALLOWED])
def test_allowed_phrases_are_still_there(file, phrase):
    assert phrase in (ROOT / file).read_text(), f"{file} no longer says {phrase!r}: drop it from ALLOWED"


@pytest.mark.parametrize(
    "text",
    [
        "1.06-1.08 x the politeness bound",
        "1.06× the bound",
        "×3.2 for the harvester",
        "100 times slower",
        "90.3% of the oracle's PageRank",
        "0.5 % smaller",
        "132.5 and 133.0 s",
        "30 ms at 10M keys",
        "150 s instead of 158 s",
        "the default since 2026-11-27",
        "114.1-115.7 s with the rule",
        "a queued URL costs about 30 bytes",
        "about 1 KB on the wire for each MB it inflates to",
        "the kernel reads at most about 2 GiB a call",
    ],
)
def test_a_figure_is_found(text):
    assert figures(text, [])


@pytest.mark.parametrize(
    "text",
    [
        "RP = 0.5 × (1 − k/m)",
        "quality × 1 × 1",
        "WIRE's default wait is 15 s",
        "a record is 64 bytes",
        'f"{share:.1%}"',
        "svg{width:100%;height:auto}",
        'b"HTTP/1.1 %s"',
        "a 0x number",
        "RFC 9309 §2.3.1.4",
        "fetched 2 or 3 times",
        "27 bytes a row plus the path",
        "a sitemap may be 50 MB on the wire",
    ],
)
def test_a_contract_is_not_a_figure(text):
    assert not figures(text, [])
