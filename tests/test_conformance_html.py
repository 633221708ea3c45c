"""The gatherer's scanner against html5lib's tokenizer and tree-construction tests (vendored, MIT licence).

The scanner builds no tree and emits no tokens, so what is checked is what it claims to get right, read off
the suites' expected output:

- tokenizer tests: the text (the Character tokens) and every attribute value of every start tag (each tag's
  attributes configured as link attributes, so the scanner hands their decoded values back), from the data
  state or after a start tag that puts the tokenizer in the case's RCDATA, RAWTEXT or PLAINTEXT state;
- tree-construction tests (scripting on, whole documents): the visible text (text nodes outside title,
  script, style, noscript, template, iframe and the other discarded elements) and the links (``href`` of
  ``a``, ``area`` and ``link``, ``src`` of ``iframe`` and ``frame``, as a set: the adoption agency clones).

Text is compared without its white space (where blocks separate words is the scanner's own choice). Cases
whose facts depend on a tree (foster-parenting out of tables, the adoption agency reordering text, elements
a tree builder drops) are listed in ``data/conformance/html5lib-known-differences.txt`` with the reason; every
other case must pass, and a listed case that starts passing fails the test too, so the list stays true.
``python tests/test_conformance_html.py`` prints the pass counts and the failing cases.
"""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from pathlib import Path

import pytest
from wirescrapy.gatherer._scanner import Scanner

from wirescrapy.gatherer import Parser

SUITE = Path(__file__).parent / "data" / "conformance" / "html5lib-tests"
TOKENIZER_FILES = [
    "test1",
    "test2",
    "test3",
    "test4",
    "entities",
    "numericEntities",
    "namedEntities",
    "unicodeChars",
    "unicodeCharsProblematic",
    "domjs",
    "pendingSpecChanges",
    "contentModelFlags",
    "escapeFlag",
]
# Start tags after which a tree builder changes the tokenizer's state, or whose content the scanner leaves
# out: the tokenizer tests go on in the data state, so their facts are not the page's.
STATEFUL_TAGS = {
    "script",
    "style",
    "title",
    "textarea",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "noscript",
    "plaintext",
    "svg",
    "math",
    "template",
    "object",
    "embed",
    "applet",
}
STATE_ELEMENTS = {"RCDATA state": "textarea", "RAWTEXT state": "xmp", "PLAINTEXT state": "plaintext"}
HIDDEN = {"title", "script", "style", "noscript", "template", "object", "embed", "applet", "iframe", "svg"}
LINKS = {"a": "href", "area": "href", "link": "href", "iframe": "src", "frame": "src"}
KNOWN_DIFFERENCES_FILE = Path(__file__).parent / "data" / "conformance" / "html5lib-known-differences.txt"


def _unescape(text: str) -> str:
    return (
        re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
        .encode("utf-16", "surrogatepass")
        .decode("utf-16", "replace")
    )


def _unescape_all(value):
    if isinstance(value, str):
        return _unescape(value)
    if isinstance(value, list):
        return [_unescape_all(item) for item in value]
    if isinstance(value, dict):
        return {_unescape(key): _unescape_all(item) for key, item in value.items()}
    return value


def _squeeze(text: str) -> str:
    return "".join(text.split())


@cache
def tokenizer_cases() -> list[tuple[str, dict]]:
    cases = []
    for name in TOKENIZER_FILES:
        path = SUITE / "tokenizer" / f"{name}.test"
        raw = (
            gzip.decompress((path.with_suffix(".test.gz")).read_bytes())
            if not path.exists()
            else path.read_bytes()
        )
        for i, test in enumerate(json.loads(raw).get("tests", [])):
            for state in test.get("initialStates", ["Data state"]):
                case_id = f"{name}#{i}" if state == "Data state" else f"{name}#{i}/{state.split()[0]}"
                cases.append((case_id, {**test, "state": state}))
    return cases


def tokenizer_facts(test: dict):
    """(input, link configuration, expected text, expected values) of a case, or None if out of scope.

    A case starting in the RCDATA, RAWTEXT or PLAINTEXT state is given to the scanner after a start tag that
    puts it there (``<textarea>``, ``<xmp>``, ``<plaintext>``: their text is visible), if the case's "last
    start tag" is that element, or if it has none and holds no end tag that the element would take as its own.
    """
    source, output = test["input"], test["output"]
    if test.get("doubleEscaped"):
        source = _unescape(source)
        output = _unescape_all(output)
    state, last = test.get("state", "Data state"), test.get("lastStartTag")
    prefix = ""
    if state != "Data state" or last is not None:
        element = STATE_ELEMENTS.get(state)
        if element is None or (last is not None and last != element):
            return None
        if last is None and state != "PLAINTEXT state" and "</" in source:
            return None
        prefix = f"<{element}>"
    config: dict[str, list[str]] = {}
    for token in output:
        if token[0] == "StartTag":
            if token[1] in STATEFUL_TAGS:
                return None
            names = config.setdefault(token[1], [])
            names.extend(a for a in token[2] if a not in names)
    if any(
        len(tag.encode()) > 32 or len(names) > 8 or any(len(a.encode()) > 32 for a in names)
        for tag, names in config.items()
    ):
        return None
    text = "".join(token[1] for token in output if token[0] == "Character").replace("\0", "")
    values = [
        (token[1], token[2][a])
        for token in output
        if token[0] == "StartTag"
        for a in config[token[1]]
        if a in token[2] and not token[2][a].startswith("#")
    ]
    return prefix + source, {tag: tuple(names) for tag, names in config.items()}, text, values


def check_tokenizer_case(test: dict) -> bool | None:
    facts = tokenizer_facts(test)
    if facts is None:
        return None
    source, config, text, values = facts
    try:
        scanner = Scanner(config, [], [], [])
    except ValueError:
        return None
    _document, found_text, _title, _base, links, _metas = scanner.scan(
        source.encode("utf-8", "surrogatepass")
    )
    return (
        _squeeze(found_text) == _squeeze(text)
        and [(tag, value) for tag, value, _text, _nofollow in links] == values
    )


# -- tree construction -----------------------------------------------------------------------------------


@cache
def tree_cases() -> list[tuple[str, dict]]:
    cases = []
    for path in sorted((SUITE / "tree-construction").glob("*.dat")):
        text = path.read_text(encoding="utf-8")
        for i, chunk in enumerate(re.split(r"\n\n(?=#data\n)", text.removeprefix("\n"))):
            sections: dict[str, str] = {}
            key = None
            for line in chunk.split("\n"):
                if line.startswith("#") and line[1:].replace("-", "").isalpha():
                    key = line[1:]
                    sections[key] = ""
                elif key is not None:
                    sections[key] += ("\n" if sections[key] else "") + line
            cases.append((f"{path.stem}#{i}", sections))
    return cases


def tree_facts(case: dict):
    """(input, expected text, expected links) of a scripting-on whole-document case, or None."""
    if "data" not in case or "document" not in case or "document-fragment" in case or "script-off" in case:
        return None
    stack: list[str] = []  # the open element names, by depth
    text: list[str] = []
    links: set[str] = set()
    lines = case["document"].split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.startswith("| "):
            continue
        body = line[2:]
        depth = (len(body) - len(body.lstrip(" "))) // 2
        body = body.lstrip(" ")
        del stack[depth:]
        if body.startswith('"'):
            value = body[1:]
            while not value.endswith('"') and i < len(lines):
                value += "\n" + lines[i]
                i += 1
            if not any(name in HIDDEN or name.startswith("svg ") or name == "content" for name in stack):
                text.append(value[:-1])
        elif body.startswith("<!--"):
            while not lines[i - 1].endswith("-->") and i < len(lines):
                i += 1
        elif body.startswith("<!DOCTYPE"):
            pass
        elif body.startswith("<") and body.endswith(">"):
            stack.append(body[1:-1])
        elif body == "content":
            stack.append("content")
        elif "=" in body and stack:
            name, _, value = body.partition("=")
            element = stack[-1]
            value = value[1:]
            while not value.endswith('"') and i < len(lines):
                value += "\n" + lines[i]
                i += 1
            value = value[:-1]
            tag = element.removeprefix("svg ")
            if LINKS.get(tag) == name and (tag == element or tag == "a") and not value.startswith("#"):
                links.add(value)
    return case["data"], "".join(text), links


@cache
def _parser() -> Parser:
    return Parser.default()


def check_tree_case(case: dict) -> bool | None:
    facts = tree_facts(case)
    if facts is None:
        return None
    source, text, links = facts
    _document, found_text, _title, _base, found, _metas = _parser()._scanner.scan(
        source.encode("utf-8", "surrogatepass")
    )
    return _squeeze(found_text) == _squeeze(text) and {value for _tag, value, *_ in found} == links


def run_suites() -> dict[str, tuple[int, int, list[str]]]:
    """Per suite: (passed, checked, ids of the failures)."""
    results = {}
    for suite, cases, check in (
        ("tokenizer", tokenizer_cases(), check_tokenizer_case),
        ("tree-construction", tree_cases(), check_tree_case),
    ):
        passed, checked, failed = 0, 0, []
        for case_id, case in cases:
            outcome = check(case)
            if outcome is None:
                continue
            checked += 1
            if outcome:
                passed += 1
            else:
                failed.append(case_id)
        results[suite] = (passed, checked, failed)
    return results


def known_differences() -> dict[str, str]:
    known = {}
    for line in KNOWN_DIFFERENCES_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            case_id, _, reason = line.partition(" ")
            known[case_id] = reason.strip()
    return known


@pytest.fixture(scope="module")
def results():
    return run_suites()


@pytest.mark.parametrize("suite", ["tokenizer", "tree-construction"])
def test_every_case_in_scope_passes_but_the_known_differences(results, suite):
    _passed, checked, failed = results[suite]
    known = {
        case
        for case in known_differences()
        if case.startswith(
            tuple(
                name + "#"
                for name in (
                    TOKENIZER_FILES
                    if suite == "tokenizer"
                    else [p.stem for p in (SUITE / "tree-construction").glob("*.dat")]
                )
            )
        )
    }
    assert checked > (4000 if suite == "tokenizer" else 1000)
    assert sorted(set(failed) - known) == [], "cases that fail and are not known differences"
    assert sorted(known - set(failed)) == [], "known differences that now pass: remove them from the list"


def test_the_named_character_references_all_decode(results):
    """Every name of the HTML Standard's table, in text and in attribute values (namedEntities.test)."""
    named = [case for case_id, case in tokenizer_cases() if case_id.startswith("namedEntities#")]
    assert len(named) > 2000
    assert all(check_tokenizer_case(case) is not False for case in named)


if __name__ == "__main__":
    for suite, (passed, checked, failed) in run_suites().items():
        print(f"{suite}: {passed}/{checked} cases pass")
        for case_id in failed:
            print("  fail", case_id)
