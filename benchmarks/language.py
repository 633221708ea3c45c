"""Language identification benchmark: WIRE's stopword count against maintained libraries, on real text.

    python -m benchmarks.language               # up to 300 samples per language and size
    python -m benchmarks.language --smoke       # 30 samples

The corpus is Debian's Debian Reference in nine languages
(``debian-reference-{en,de,es,fr,it,pt,id,ja,zh-cn}``, installed with apt-get when missing): the plain-text
edition of each translation, cut into paragraphs. A translation leaves some paragraphs in English; a paragraph
that also occurs in the English edition is left out, so that what remains is labelled by its translation.
Samples are made at two sizes: one paragraph of 80–400 characters (a short page, an abstract) and 1,000–3,000
characters of consecutive paragraphs (a page's visible text).

Contenders, all given the same text:
  - WIRE's method: count the stopwords of each language in the text, the language with most wins (no
    answer below three stopwords); the lists below are the usual short lists of function words (WIRE ships
    its own; they are of this kind). It cannot tell languages whose words are not separated by spaces.
  - py3langid (langid.py's model, naive Bayes on byte n-grams, 97 languages, model in the package);
  - pycld2 (Chromium's CLD2, C++, model compiled in);
  - lingua-language-detector (Rust, n-gram models of 75 languages in the package, high-accuracy mode; a 96 MB
    wheel, so not in requirements.txt: skipped when not installed).
Accuracy is the share of samples labelled with their language; speed is characters per CPU second.
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

DOCS = Path("/usr/share/doc/debian-reference-common/docs")
LANGUAGES = ("en", "de", "es", "fr", "it", "pt", "id", "ja", "zh")
PACKAGE = {"zh": "zh-cn"}

STOPWORDS = {
    "en": "the of and to in is that it for on as with are this be by or from an not which you can",
    "de": (
        "der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als auch es an werden"
    ),
    "es": "de la que el en y los del se las por un para con no una su al lo como más pero sus le ya o este",
    "fr": "de la le et les des en un du une que est pour qui dans par plus pas au sur ne se ce il sont avec",
    "it": "di e il la che in a per un del non è una sono della le con si da dei nel alla più questo gli come",
    "pt": "de a o que e do da em um para é com não uma os no se na por mais as dos como mas ao ele das",
    "id": "yang dan di ini itu dengan untuk tidak dari dalam akan pada juga ke karena tersebut bisa ada atau",
}


def ensure_corpus() -> None:
    missing = [
        lang
        for lang in LANGUAGES
        if not (DOCS / f"debian-reference.{PACKAGE.get(lang, lang)}.txt.gz").exists()
    ]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        sys.exit("Debian Reference is missing and apt-get is not available")
    packages = [f"debian-reference-{PACKAGE.get(lang, lang)}" for lang in missing]
    print(f"installing {' '.join(packages)} (apt-get)...", flush=True)
    for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", *packages]):
        done = subprocess.run(
            command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed ({done.stderr.strip()[-300:]})")


def paragraphs(lang: str) -> list[str]:
    with gzip.open(DOCS / f"debian-reference.{PACKAGE.get(lang, lang)}.txt.gz", "rt", encoding="utf-8") as f:
        text = f.read()
    return [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", text) if p.strip()]


def samples(count: int, seed: int = 1) -> dict[tuple[str, str], list[str]]:
    english = set(paragraphs("en"))
    rng = random.Random(seed)
    out = {}
    for lang in LANGUAGES:
        paras = paragraphs(lang)
        own = [p for p in paras if lang == "en" or p not in english]
        # Prose, not listings: most of the paragraph is letters.
        prose = [p for p in own if sum(c.isalpha() or c.isspace() for c in p) > 0.85 * len(p)]
        short = [p for p in prose if 80 <= len(p) <= 400]
        out[lang, "short"] = rng.sample(short, min(count, len(short)))
        long = []
        starts = list(range(len(prose)))
        rng.shuffle(starts)
        for start in starts:
            text = ""
            for p in prose[start:]:
                text += p + " "
                if len(text) >= 1000:
                    break
            if 1000 <= len(text) <= 3000:
                long.append(text[:3000])
            if len(long) >= count:
                break
        out[lang, "page"] = long
    return out


def wire_stopwords():
    words = {lang: frozenset(ws.split()) for lang, ws in STOPWORDS.items()}
    token = re.compile(r"\w+")

    def identify(text: str) -> str:
        counts = dict.fromkeys(words, 0)
        for w in token.findall(text.lower()):
            for lang, ws in words.items():
                counts[lang] += w in ws
        lang, best = max(counts.items(), key=lambda kv: kv[1])
        return lang if best >= 3 else ""

    return identify


def py3langid():
    import py3langid as langid

    return lambda text: langid.classify(text)[0]


def pycld2():
    import pycld2 as cld2

    def identify(text: str) -> str:
        _, _, details = cld2.detect(text)
        code = details[0][1]
        return "" if code == "un" else code.split("-")[0]

    return identify


def lingua():
    from lingua import LanguageDetectorBuilder

    detector = LanguageDetectorBuilder.from_all_languages().build()

    def identify(text: str) -> str:
        language = detector.detect_language_of(text)
        return language.iso_code_639_1.name.lower() if language else ""

    return identify


CONTENDERS = {"WIRE stopwords": wire_stopwords, "py3langid": py3langid, "pycld2": pycld2, "lingua": lingua}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=300, help="samples per language and size")
    parser.add_argument("--smoke", action="store_true", help="30 samples, for CI")
    args = parser.parse_args()
    ensure_corpus()
    corpus = samples(30 if args.smoke else args.samples)
    sizes = {lang: (len(corpus[lang, "short"]), len(corpus[lang, "page"])) for lang in LANGUAGES}
    print("samples (short, page):", ", ".join(f"{lang} {s}/{p}" for lang, (s, p) in sizes.items()))
    print(
        f"{'contender':<16} {'short %':>8} {'page %':>8} {'short, no CJK %':>16} {'kchars/CPU s':>13}  "
        "worst (short)"
    )
    for name, make in CONTENDERS.items():
        try:
            identify = make()
        except ImportError as exc:  # lingua's wheel is 96 MB: not in requirements.txt
            print(f"{name:<16} not installed ({exc.name}): pip install lingua-language-detector==2.1.1")
            continue
        identify("warm up the model")
        right = {"short": 0, "page": 0}
        total = {"short": 0, "page": 0}
        spaced_right = spaced_total = 0
        per_lang = {}
        chars, cpu = 0, 0.0
        for (lang, size), texts in corpus.items():
            start = time.process_time()
            answers = [identify(t) for t in texts]
            cpu += time.process_time() - start
            chars += sum(map(len, texts))
            good = sum(a == lang for a in answers)
            right[size] += good
            total[size] += len(texts)
            if size == "short":
                per_lang[lang] = good / max(len(texts), 1)
                if lang not in ("ja", "zh"):
                    spaced_right += good
                    spaced_total += len(texts)
        worst = ", ".join(
            f"{lang} {100 * v:.0f}%" for lang, v in sorted(per_lang.items(), key=lambda kv: kv[1])[:3]
        )
        print(
            f"{name:<16} {100 * right['short'] / total['short']:>8.1f} "
            f"{100 * right['page'] / total['page']:>8.1f} {100 * spaced_right / spaced_total:>16.1f} "
            f"{chars / cpu / 1000:>13.0f}  {worst}"
        )


if __name__ == "__main__":
    main()
