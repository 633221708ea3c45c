"""The sites of the real-document webs: one Debian documentation package per host.

Each site is the HTML tree a package installs, served as it is, on its own loopback address. ``SITES`` is
the web the crawl order was tuned on (``docs13`` in ``webs.py``, which names the bench's other webs). Its
sites were chosen for the variety of their structure: a Doxygen API reference (Eigen), a Doxygen manual,
the Apache HTTP Server manual in eleven languages, DocBook books (PostgreSQL, the Debian Reference),
Sphinx documentation (Python, Scrapy, Django), gtk-doc (GIO), a hand-written site (SQLite), asciidoc
manual pages (Git) and a Doxygen reference of a Java-style API (Xerces-C).

``held_out`` sites are kept out of any tuning of the crawl order: figures for them are reported apart, to
show what carries over to sites nobody looked at. The bench holds out whole webs (``webs.held_out``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from wirescrapy.testing import nginx

DOMAIN = "realweb.test"  # reserved top-level domain (RFC 2606): never a real host
FIRST_ADDRESS = 2  # site i of a web listens on 127.0.0.(FIRST_ADDRESS + i)


@dataclass(frozen=True)
class Site:
    name: str  # the host is f"{name}.{DOMAIN}"
    package: str  # the Debian package installing the tree
    root: str  # the tree served as the site's document root
    kind: str  # how the HTML was made
    held_out: bool = False
    index: str = "index.html"  # the file a directory URL serves
    # Packages that add pages to the tree, which its pages link to: installed with it, so that the web is the
    # same on every machine (``benchmarks/language.py`` installs Debian Reference's languages too).
    also: tuple[str, ...] = ()

    @property
    def host(self) -> str:
        return f"{self.name}.{DOMAIN}"


SITES: tuple[Site, ...] = (
    Site("apache", "apache2-doc", "/usr/share/doc/apache2-doc/manual", "multilingual manual (11 languages)"),
    Site("eigen", "libeigen3-doc", "/usr/share/doc/libeigen3-dev/html", "Doxygen API reference"),
    Site("postgresql", "postgresql-doc-15", "/usr/share/doc/postgresql-doc-15/html", "DocBook book"),
    Site("sqlite", "sqlite3-doc", "/usr/share/doc/sqlite3", "hand-written site"),
    Site("python", "python3.11-doc", "/usr/share/doc/python3.11/html", "Sphinx"),
    Site("doxygen", "doxygen-doc", "/usr/share/doc/doxygen/html", "Doxygen manual"),
    Site("gio", "libglib2.0-doc", "/usr/share/gtk-doc/html/gio", "gtk-doc API reference"),
    Site("scrapy", "python-scrapy-doc", "/usr/share/doc/python-scrapy-doc/html", "Sphinx"),
    Site("django", "python-django-doc", "/usr/share/doc/python-django-doc/html", "Sphinx", held_out=True),
    Site(
        "xerces",
        "libxerces-c-doc",
        "/usr/share/doc/libxerces-c-doc/html",
        "Doxygen API reference",
        held_out=True,
    ),
    Site("git", "git-doc", "/usr/share/doc/git-doc", "asciidoc manual pages", held_out=True),
    Site(
        "debref",
        "debian-reference-en",
        "/usr/share/debian-reference",
        "DocBook book (multilingual)",
        held_out=True,
        also=tuple(
            f"debian-reference-{lang}" for lang in ("de", "es", "fr", "id", "it", "ja", "pt", "zh-cn")
        ),
    ),
    Site(
        "libxml2",
        "libxml2-doc",
        "/usr/share/doc/libxml2/html",
        "hand-written site + API pages",
        held_out=True,
    ),
)
BY_NAME = {site.name: site for site in SITES}


def select(names: str | None) -> list[Site]:
    """Sites of the tuned web named in a comma-separated list (all when None or empty); ValueError for
    unknown names. ``webs.select`` chooses in any web."""
    return pick(SITES, names)


def pick(sites: tuple[Site, ...], names: str | None) -> list[Site]:
    """The ``sites`` named in a comma-separated list, in its order (all when None or empty); ValueError for
    unknown names."""
    if not names:
        return list(sites)
    by_name = {site.name: site for site in sites}
    chosen = [name.strip() for name in names.split(",") if name.strip()]
    if unknown := [name for name in chosen if name not in by_name]:
        raise ValueError(f"unknown real-web sites {unknown}; known: {', '.join(by_name)}")
    return [by_name[name] for name in chosen]


def missing(sites: list[Site]) -> list[Site]:
    """Sites whose document root (with its index file), or one of the packages adding to it, is not
    installed."""
    absent = not_installed([package for site in sites for package in site.also])
    return [
        site
        for site in sites
        if not (Path(site.root) / site.index).is_file() or absent.intersection(site.also)
    ]


def packages(sites: list[Site]) -> list[str]:
    """The packages the sites' trees come from."""
    return sorted({package for site in sites for package in (site.package, *site.also)})


def not_installed(names: list[str]) -> set[str]:
    """The packages among ``names`` that dpkg does not have installed (all of them without dpkg)."""
    if not names:
        return set()
    try:
        query = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\n", *names],
            check=False,
            capture_output=True,
            text=True,
        )
    except FileNotFoundError:
        return set(names)
    return set(names) - {line.split()[0] for line in query.stdout.splitlines() if line.endswith(" installed")}


def install(sites: list[Site]) -> None:
    """apt-get install the packages of the sites not installed yet, and nginx (root only); RuntimeError if
    it fails."""
    absent = missing(sites)
    server = [] if nginx.binary() else ["nginx-light"]
    if not absent and not server:
        return
    wanted = packages(absent) + server
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise RuntimeError(
            f"real web: not installed: {' '.join(wanted)} (run as root with apt-get, or "
            f"apt-get install {' '.join(wanted)})"
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    command = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *wanted]
    if subprocess.run(
        command, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    ).returncode:
        # The package lists may be missing on a fresh machine.
        subprocess.run(["apt-get", "update", "-qq"], env=env, stdout=subprocess.DEVNULL, check=False)
        result = subprocess.run(command, check=False, env=env, capture_output=True, text=True)
        if result.returncode:
            raise RuntimeError(
                f"real web: apt-get install {' '.join(wanted)} failed: "
                f"{result.stderr.strip().splitlines()[-1:] or result.returncode}"
            )
    if still := missing(absent):
        raise RuntimeError(
            f"real web: {', '.join(s.root for s in still)} still missing after apt-get install"
        )
