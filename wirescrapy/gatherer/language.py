"""The language of a page's text, for the document record's ``language`` (WIRE's language analysis).

WIRE counted the stopwords of each language it had a list for. ``py3langid`` (langid.py's naive Bayes
model over byte n-grams, 97 languages, shipped in the package, maintained) does better on real text and is
fast enough to run on every page: ``benchmarks/language.py`` measures both, with CLD2 and lingua, on the
nine translations of Debian Reference. Only the first ``SAMPLE`` characters are classified: past a
thousand characters the answer no longer changes, and the time would grow with the page.

The result is an ISO 639-1 code ("en", "es"), or "" when the text is too short to tell (fewer than
``MIN_LETTERS`` letters: a page of links, an image gallery).

The model ships LZMA-compressed, and reading it is slow, in every process that classifies: each parse
worker, so each harvester job (``gatherer/workers.py``), and a job queued behind another spends that CPU
while that one harvests, on a machine whose cores the harvest needs. The model read once is kept in the
user's cache (``$XDG_CACHE_HOME/wirescrapy``, else ``~/.cache/wirescrapy``, created private to the user) as
the pickled classifier, zstd-compressed, which reads several times faster. The cache file is named after
py3langid's version and its model file's size; one that cannot be read, or that is not the user's own or that
others may write, is never unpickled: the model is read as shipped and the file written again. A cache that
cannot be written is no error.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import stat
import tempfile
from importlib.metadata import version
from pathlib import Path

SAMPLE = 2000  # characters classified
MIN_LETTERS = 20
CACHE_LEVEL = 3  # zstd level of the cached model: small, and quick to decompress


def identify(text: str) -> str:
    """The language of ``text`` as an ISO 639-1 code, "" when it has too few letters to say."""
    sample = text[:SAMPLE]
    if (
        sum(c.isalpha() for c in sample[:200]) < MIN_LETTERS
        and sum(c.isalpha() for c in sample) < MIN_LETTERS
    ):
        return ""
    return classifier().classify(sample)[0]


def cache_dir() -> Path:
    """Where the model read once is kept (the module's docstring)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "wirescrapy"


@functools.cache
def classifier():
    """py3langid's classifier, read on first use (not at import: commands that never parse start fast), from
    the user's cache when it holds it (the module's docstring)."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    model = MODEL_DIR / MODEL_FILE
    path = cache_dir() / f"py3langid-{version('py3langid')}-{model.stat().st_size}.pickle.zst"
    loaded = _read_cached(path, LanguageIdentifier)
    if loaded is not None:
        return loaded
    identifier = LanguageIdentifier.from_model_file(model)
    _write_cached(path, identifier)
    return identifier


def _read_cached(path: Path, kind: type):
    import zstandard

    try:
        with open(path, "rb") as cached:
            info = os.fstat(cached.fileno())
            if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                return None  # not the user's own, or others may write it: never unpickled
            loaded = pickle.loads(zstandard.ZstdDecompressor().decompress(cached.read()))
    except (
        OSError,
        EOFError,
        pickle.UnpicklingError,
        zstandard.ZstdError,
        AttributeError,
        ImportError,
        TypeError,
        ValueError,
    ):
        return None
    return loaded if isinstance(loaded, kind) else None


def _write_cached(path: Path, identifier) -> None:
    import zstandard

    data = zstandard.ZstdCompressor(level=CACHE_LEVEL).compress(pickle.dumps(identifier, protocol=5))
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")  # mode 0600
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, path)  # whole or not at all: another process may read it at any time
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
