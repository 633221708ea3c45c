"""The language of a page's text (``gatherer/language.py``), and the model kept in the user's cache."""

from __future__ import annotations

import os
import stat

import pytest

from wirescrapy.gatherer import language

FRENCH = "Ceci est un texte écrit en français, assez long pour que le modèle dise sans hésiter sa langue."
ENGLISH = "This text is written in English, and it is long enough for the model to say which language it is."


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache of the user's, and the classifier read again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    language.classifier.cache_clear()
    yield tmp_path / "cache" / "wirescrapy"
    language.classifier.cache_clear()


def cached_files(directory):
    return sorted(path.name for path in directory.iterdir()) if directory.exists() else []


def test_a_text_s_language_and_a_text_too_short_to_tell(cache):
    assert language.identify(FRENCH) == "fr"
    assert language.identify(ENGLISH) == "en"
    assert language.identify("12 34 -- ok") == ""


def test_the_model_read_once_is_read_from_the_user_s_cache_after(cache, monkeypatch):
    from py3langid.langid import LanguageIdentifier

    assert language.identify(FRENCH) == "fr"
    (name,) = cached_files(cache)
    assert name.startswith("py3langid-") and name.endswith(".pickle.zst")
    assert (
        stat.S_IMODE(cache.stat().st_mode) == 0o700 and stat.S_IMODE((cache / name).stat().st_mode) == 0o600
    )

    def shipped_model(*args, **kwargs):
        raise AssertionError("the shipped model was read again")

    monkeypatch.setattr(LanguageIdentifier, "from_model_file", shipped_model)
    language.classifier.cache_clear()
    assert language.identify(FRENCH) == "fr" and language.identify(ENGLISH) == "en"


@pytest.mark.parametrize("damage", ["truncated", "not zstd", "writable by others"])
def test_a_cache_file_that_cannot_be_trusted_is_read_as_shipped_and_written_again(cache, damage):
    language.identify(FRENCH)
    (name,) = cached_files(cache)
    path = cache / name
    whole = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(whole[: len(whole) // 2])
    elif damage == "not zstd":
        path.write_bytes(b"not a cached model")
    else:
        os.chmod(path, 0o666)
    language.classifier.cache_clear()
    assert language.identify(FRENCH) == "fr"
    assert cached_files(cache) == [name] and path.read_bytes() == whole
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    language.classifier.cache_clear()
    try:
        assert language.identify(ENGLISH) == "en"
    finally:
        language.classifier.cache_clear()
    assert blocked.read_text(encoding="utf-8") == "not a directory"
