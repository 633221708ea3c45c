"""The near-duplicate fingerprint (``gatherer/simhash.py``): shingles, SimHash, and a site's template left
out."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from wirescrapy.gatherer.simhash import (
    MAX_SHINGLES,
    SKETCH_BITS,
    TEMPLATE_MIN_PAGES,
    TEMPLATE_SHARE,
    WARMUP_PAGES,
    Fingerprinter,
    hamming,
    shingles,
    simhash,
    word_hashes,
)


def words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(3, 9))) for _ in range(n)]


def text(n: int, seed: int) -> str:
    return " ".join(words(n, seed))


def fingerprint(value: str) -> int | None:
    return simhash(shingles(value))


def test_words_are_lower_cased_runs_of_letters_and_digits():
    assert np.array_equal(word_hashes("Hello, WORLD 42!"), word_hashes("hello world   42"))
    assert len(word_hashes("naïve café, déjà vu")) == 4
    assert len(set(word_hashes("a b ab ba").tolist())) == 4


MASK = (1 << 64) - 1


def mix(value: int) -> int:
    value ^= value >> 30
    value = value * 0xBF58476D1CE4E5B9 & MASK
    value ^= value >> 27
    value = value * 0x94D049BB133111EB & MASK
    return value ^ (value >> 31)


def reference_words(value: str) -> list[int]:
    """The word hashes as ``_simhash.c`` defines them, one word and one byte at a time."""
    hashes = []
    for word in re.findall(rb"[0-9a-z\x80-\xff]+", value.encode("utf-8", "surrogatepass").lower()):
        total = sum(byte * pow(0x100000001B3, min(place, 31) + 1, 1 << 64) for place, byte in enumerate(word))
        hashes.append(mix(total & MASK))
    return hashes


def reference_shingles(value: str) -> set[int]:
    """The shingle hashes as ``_simhash.c`` defines them, from ``reference_words``."""
    hashes = reference_words(value)
    multipliers = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5)
    return {
        mix(sum(h * m for h, m in zip(hashes[i : i + 4], multipliers, strict=True)) & MASK)
        for i in range(len(hashes) - 3)
    }


def test_the_kernel_hashes_words_and_shingles_as_defined():
    sample = "Déjà vu: the QUICK brown fox, 42 times; " + text(300, 8) + " \udcff surrogate"
    assert set(shingles(sample).tolist()) == reference_shingles(sample)
    assert len(shingles(sample)) == len(reference_shingles(sample))  # distinct
    long = text(12_000, 9)
    assert shingles(long).tolist() == sorted(reference_shingles(long))[:MAX_SHINGLES]  # the smallest


def test_words_of_any_length_and_byte_hash_as_defined():
    # Words past the 32 bytes whose places have their own power, upper case, digits, every ASCII byte as a
    # separator or in a word, non-ASCII letters and a lone surrogate; at the text's start and end too. The
    # shingles read a str's code points as they are stored: one, two or four bytes each, by the str.
    rng = random.Random(11)
    kinds = (["é", "ß", "\xff"], ["é", "Ω", "\udcff", "\u4e2d"], ["é", "\U0001f600", "\udcff"])
    for n in range(60):
        pieces = [chr(code) for code in range(128)] + kinds[n % 3]
        runs = [
            "".join(
                rng.choice(pieces) for _ in range(rng.choice((1, 3, 7, 8, 9, 31, 32, 33, 40, 64, 65, 90)))
            )
            for _ in range(60)
        ]
        value = ("" if n % 2 else "X" * 70) + "".join(runs) + ("" if n % 3 else "y" * 33)
        assert word_hashes(value).tolist() == reference_words(value)
        assert (
            set(shingles(value).tolist()) == reference_shingles(value) or len(reference_shingles(value)) < 8
        )


def test_a_long_page_of_repeated_text_keeps_its_smallest_distinct_shingles():
    # More shingles than MAX_SHINGLES, but fewer distinct ones: all of those, sorted.
    half = text(MAX_SHINGLES * 3 // 4, 12)
    doubled = f"{half} {half}"
    assert shingles(doubled).tolist() == sorted(reference_shingles(doubled))
    assert len(reference_shingles(doubled)) < MAX_SHINGLES < len(reference_words(doubled))
    often = " ".join([text(500, 13)] * 40)  # each shingle 40 times
    assert shingles(often).tolist() == sorted(reference_shingles(often))


def test_too_little_text_has_no_fingerprint():
    assert len(shingles("")) == 0 and fingerprint("") is None
    assert fingerprint("word " * 100_000) is None  # one word repeated: one shingle
    assert fingerprint("<div class='x'></div>" * 20_000) is None  # markup with no text, as text
    assert fingerprint("one two three four five six seven eight nine ten eleven") is not None


def test_a_long_page_keeps_a_bounded_sample_that_copies_share():
    page = text(50_000, 1)
    sample = shingles(page)
    assert len(sample) == MAX_SHINGLES
    assert hamming(simhash(sample), fingerprint(page + " " + text(5, 2))) <= 3


def test_a_changed_word_moves_few_bits_and_another_page_many():
    page = words(800, 3)
    changed = list(page)
    changed[400] = "2026"
    assert hamming(fingerprint(" ".join(page)), fingerprint(" ".join(changed))) <= 3
    assert hamming(fingerprint(" ".join(page)), fingerprint(text(800, 4))) > 10


def test_simhash_is_the_weighted_majority_of_each_bit():
    rng = np.random.default_rng(1)
    hashes = rng.integers(0, 1 << 64, 301, dtype=np.uint64, endpoint=False)
    weights = rng.integers(0, 3, 301).astype(np.int32)
    votes = [
        sum(int(w) if int(h) >> bit & 1 else -int(w) for h, w in zip(hashes, weights)) for bit in range(64)
    ]
    assert simhash(hashes, weights) == sum(1 << bit for bit in range(64) if votes[bit] > 0)
    assert simhash(np.array([1, 3, 1 << 63, (1 << 63) | 1], np.uint64)) == 1  # a tie is 0


def test_weights_leave_shingles_out():
    hashes = shingles(text(300, 5))
    keep = np.zeros(len(hashes), np.int32)
    keep[: len(hashes) // 2] = 1
    assert simhash(hashes, keep) == simhash(hashes[: len(hashes) // 2])
    assert simhash(hashes, np.zeros(len(hashes), np.int32)) is None
    with pytest.raises(ValueError, match="weights"):
        simhash(hashes, keep[:-1])


def test_a_site_s_first_pages_wait_until_its_template_is_known():
    fingerprinter = Fingerprinter()
    for page in range(WARMUP_PAGES - 1):
        assert fingerprinter.add("site", page, shingles(text(200, page))) == []
    assert fingerprinter.held == sum(len(shingles(text(200, page))) for page in range(WARMUP_PAGES - 1))
    decided = fingerprinter.add("site", 99, shingles(text(200, 99)))
    assert [key for key, _ in decided] == [*range(WARMUP_PAGES - 1), 99]
    assert [key for key, _ in fingerprinter.add("site", 100, shingles(text(200, 100)))] == [100]
    assert fingerprinter.held == 0


def test_pages_sharing_a_large_template_are_not_near_duplicates():
    template = text(600, 1000)  # menu, header and footer, larger than each page's own text
    fingerprinter = Fingerprinter()
    decided = dict(
        pair
        for page in range(20)
        for pair in fingerprinter.add("site", page, shingles(f"{template} {text(150, page)} {template}"))
    )
    assert len(decided) == 20
    distances = [hamming(decided[a], decided[b]) for a in range(20) for b in range(a)]
    assert min(distances) > 8
    plain = [fingerprint(f"{template} {text(150, page)} {template}") for page in range(20)]
    plain_distances = [hamming(plain[a], plain[b]) for a in range(20) for b in range(a)]
    assert sum(plain_distances) < sum(distances) / 2  # what it avoids: the template pulls them together


def test_near_copies_within_a_site_stay_near_with_the_template_left_out():
    template = text(300, 2000)
    own = words(1500, 7)
    dated = [*own[:200], "2026", *own[201:]]
    fingerprinter = Fingerprinter()
    pages = [f"{template} {text(300, page)}" for page in range(10)]
    pages += [f"{template} {' '.join(own)}", f"{template} {' '.join(dated)}"]
    decided = dict(
        pair for key, page in enumerate(pages) for pair in fingerprinter.add("s", key, shingles(page))
    )
    decided.update(fingerprinter.flush())
    assert hamming(decided[10], decided[11]) <= 3


def test_sites_beyond_the_bound_have_their_held_pages_decided():
    fingerprinter = Fingerprinter(max_sites=2)
    fingerprinter.add("a", 1, shingles(text(100, 1)))
    fingerprinter.add("b", 2, shingles(text(100, 2)))
    decided = fingerprinter.add("c", 3, shingles(text(100, 3)))
    assert [key for key, _ in decided] == [1] and decided[0][1] is not None
    assert sorted(key for key, _ in fingerprinter.flush()) == [2, 3]
    assert fingerprinter.held == 0


def test_held_pages_beyond_the_bound_are_decided():
    fingerprinter = Fingerprinter(max_held=500)
    assert fingerprinter.add("a", 1, shingles(text(300, 1))) == []
    decided = fingerprinter.add("b", 2, shingles(text(300, 2)))
    assert [key for key, _ in decided] == [1] and fingerprinter.held == len(shingles(text(300, 2)))


def test_a_page_of_no_text_is_decided_as_none():
    fingerprinter = Fingerprinter()
    decided = {}
    for page in range(WARMUP_PAGES):
        decided.update(fingerprinter.add("site", page, shingles(text(100, page) if page else "")))
    assert decided[0] is None and all(decided[page] is not None for page in range(1, WARMUP_PAGES))


def test_the_sketch_counts_a_page_once_a_counter_and_leaves_its_template_out():
    fingerprinter = Fingerprinter()
    pages = [shingles(f"{text(300, 1000)} {text(100, page)}") for page in range(WARMUP_PAGES + 3)]
    pages.append(np.array([5, 5 | 1 << 40, 7], np.uint64))  # one counter of the first row twice
    sketch = np.zeros((2, 1 << SKETCH_BITS), np.int64)
    low, high = (1 << SKETCH_BITS) - 1, ((1 << SKETCH_BITS) - 1) << 32
    decided, expected = {}, {}
    for page, hashes in enumerate(pages):
        for row, at in enumerate(((hashes & low), (hashes & high) >> 32)):
            sketch[row][np.unique(at.astype(np.intp))] += 1
        seen = np.minimum(sketch[0][hashes & low], sketch[1][(hashes & high) >> 32])
        keep = seen < max(TEMPLATE_MIN_PAGES, TEMPLATE_SHARE * (page + 1))
        expected[page] = simhash(hashes, keep.astype(np.int32)), np.count_nonzero(keep)
        decided.update(fingerprinter.add("site", page, hashes))
    assert np.array_equal(fingerprinter._sites["site"].sketch, sketch)
    for page in range(WARMUP_PAGES, len(pages) - 1):  # decided as they came, the site warmed up
        fingerprint, kept = expected[page]
        assert decided[page] == fingerprint and 0 < kept < len(pages[page])  # the template left out
