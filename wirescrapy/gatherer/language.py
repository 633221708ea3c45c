"""The language of a page's text, for the document record's ``language`` (WIRE's language analysis).

WIRE counted the stopwords of each language it had a list for. ``py3langid`` (langid.py's naive Bayes
model over byte n-grams, 97 languages, shipped in the package, maintained) does better on real text and is
fast enough to run on every page: ``benchmarks/language.py`` measures both, with CLD2 and lingua, on the
nine translations of Debian Reference. Only the first ``SAMPLE`` characters are classified: past a
thousand characters the answer no longer changes, and the time would grow with the page.

The result is an ISO 639-1 code ("en", "es"), or "" when the text is too short to tell (fewer than
``MIN_LETTERS`` letters: a page of links, an image gallery).
"""

from __future__ import annotations

SAMPLE = 2000  # characters classified
MIN_LETTERS = 20


def identify(text: str) -> str:
    """The language of ``text`` as an ISO 639-1 code, "" when it has too few letters to say."""
    sample = text[:SAMPLE]
    if sum(c.isalpha() for c in sample[:200]) < MIN_LETTERS and sum(c.isalpha() for c in sample) < MIN_LETTERS:
        return ""
    import py3langid  # its model loads on first use (~0.7 s): not at import, so commands that never parse start fast

    return py3langid.classify(sample)[0]
