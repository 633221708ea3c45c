"""The bench of webs: named webs of real documents, each a set of Debian documentation packages, one a host.

``docs13`` is the web the crawl order was tuned on (``sites.SITES``): it is the default everywhere and is
never held out. ``web1`` to ``web6`` are the bench that judges whether a policy holds on webs nobody tuned
it on. Each is shaped like a slice of a national web: one or two large sites, a few medium ones, many small.
Among them are API references reached through index pages (Doxygen trees whose home is a listing page, as
their ``index.html`` links through JavaScript only), javadoc, gtk-doc and gi-docgen references, texinfo
manuals, a multilingual manual, wikis exported to HTML, and Sphinx, DocBook and hand-written sites. No package
is in two webs, and none is in ``docs13``.

Each site is served from the package's own directory, so that what is reachable does not depend on what
else the machine has installed: links to a neighbouring package's tree (gtk-doc's ``../glib/``, Qt's
``../qtgui/``) are broken links here, by design. A site whose home page is not its tree's ``index.html``
names its ``index``: nginx serves that file for every directory URL of the site.

Two webs are held out of any tuning (:func:`held_out`): nobody tunes on them or reads their per-batch
traces, and they are crawled only for the bench's final table.
"""

from __future__ import annotations

import hashlib

from wirescrapy.testing.realweb.sites import FIRST_ADDRESS, SITES, Site, pick

DEFAULT = "docs13"
HELD_OUT = 2  # how many of the bench's webs are held out

WEBS: dict[str, tuple[Site, ...]] = {
    DEFAULT: SITES,
    "web1": (
        Site("gtk4", "libgtk-4-doc", "/usr/share/doc/libgtk-4-doc/gtk4", "gi-docgen API reference (GTK 4)"),
        Site(
            "xcb",
            "libxcb-doc",
            "/usr/share/doc/libxcb1-dev/manual",
            "Doxygen API reference entered by an index page",
            index="modules.html",
        ),
        Site("gimp-de", "gimp-help-de", "/usr/share/gimp/2.0/help/de", "DocBook user manual (German)"),
        Site("logback", "liblogback-java-doc", "/usr/share/doc/liblogback-java/api", "javadoc"),
        Site("octave", "octave-doc", "/usr/share/doc/octave/octave.html", "texinfo HTML manual"),
        Site("llvm", "llvm-15-doc", "/usr/share/doc/llvm-15-doc/html", "Sphinx"),
        Site("glm", "libglm-doc", "/usr/share/doc/libglm-doc/api", "Doxygen API reference"),
        Site("qmi", "libqmi-glib-doc", "/usr/share/gtk-doc/html/libqmi-glib", "gtk-doc API reference"),
        Site(
            "sdl2",
            "libsdl2-doc",
            "/usr/share/doc/libsdl2-doc/html",
            "Doxygen API reference entered by an index page",
            index="files.html",
        ),
        Site("jsoup", "libjsoup-java-doc", "/usr/share/doc/libjsoup-java/api", "javadoc"),
        Site("vim", "vim-doc", "/usr/share/doc/vim/html", "vim help as HTML (vim2html)"),
        Site("cairo", "libcairo2-doc", "/usr/share/gtk-doc/html/cairo", "gtk-doc API reference"),
        Site("kitty", "kitty-doc", "/usr/share/doc/kitty/html", "Sphinx"),
        Site("zsh", "zsh-doc", "/usr/share/doc/zsh-common/html", "texinfo HTML manual (texi2any)"),
        Site("bind9", "bind9-doc", "/usr/share/doc/bind9-doc/arm", "Sphinx"),
    ),
    "web2": (
        Site("poi", "libapache-poi-java-doc", "/usr/share/doc/libapache-poi-java/api", "javadoc (large API)"),
        Site("cmake", "cmake-doc", "/usr/share/doc/cmake-data/html", "Sphinx"),
        Site("xalan", "libxalan2-java-doc", "/usr/share/doc/libxalan2-java/api", "javadoc"),
        Site("ikiwiki", "ikiwiki", "/usr/share/doc/ikiwiki/html", "wiki (ikiwiki's own wiki, exported)"),
        Site(
            "glibmm",
            "libglibmm-2.4-doc",
            "/usr/share/doc/libglibmm-2.4-doc/reference/html",
            "Doxygen API reference",
        ),
        Site("gtk3", "libgtk-3-doc", "/usr/share/gtk-doc/html/gtk3", "gtk-doc API reference"),
        Site(
            "maxima",
            "maxima-doc",
            "/usr/share/doc/maxima-doc/html",
            "texinfo HTML manual",
            index="maxima_toc.html",
        ),
        Site(
            "mbedtls",
            "libmbedtls-doc",
            "/usr/share/doc/libmbedtls-dev/apidoc",
            "Doxygen API reference entered by an index page",
            index="files.html",
        ),
        Site("swipl", "swi-prolog-doc", "/usr/share/swi-prolog/doc/Manual", "LaTeX-generated HTML manual"),
        Site("postfix", "postfix-doc", "/usr/share/doc/postfix/html", "hand-written HTML"),
        Site(
            "gtksourceview",
            "libgtksourceview-4-doc",
            "/usr/share/gtk-doc/html/gtksourceview-4.0",
            "gtk-doc API reference",
        ),
        Site(
            "drf",
            "python-djangorestframework-doc",
            "/usr/share/doc/python3-djangorestframework/html",
            "MkDocs",
        ),
        Site("kea", "kea-doc", "/usr/share/doc/kea/html", "Sphinx"),
        Site("policy", "debian-policy", "/usr/share/doc/debian-policy/policy.html", "Sphinx"),
    ),
    "web3": (
        Site(
            "lilypond-ml",
            "lilypond-doc-html",
            "/usr/share/doc/lilypond/html/Documentation",
            "texinfo HTML manuals, multilingual (en + de, es, fr, it, ja)",
            index="web-big-page.html",
            also=(
                "lilypond-doc-html-de",
                "lilypond-doc-html-fr",
                "lilypond-doc-html-es",
                "lilypond-doc-html-it",
                "lilypond-doc-html-ja",
            ),
        ),
        Site("wx", "wx3.2-doc", "/usr/share/doc/wx3.2-doc/html", "Doxygen API reference + manual"),
        Site(
            "gitannex",
            "git-annex",
            "/usr/share/doc/git-annex/html",
            "wiki (ikiwiki export of git-annex's wiki)",
        ),
        Site("pylint", "pylint-doc", "/usr/share/doc/pylint/html", "Sphinx"),
        Site("lang3", "libcommons-lang3-java-doc", "/usr/share/doc/libcommons-lang3-java/api", "javadoc"),
        Site(
            "pango",
            "libpango1.0-doc",
            "/usr/share/doc/libpango1.0-doc/reference/Pango",
            "gi-docgen API reference",
        ),
        Site(
            "upnp",
            "libupnp-doc",
            "/usr/share/doc/libupnp-dev/html",
            "Doxygen API reference entered by an index page",
            index="modules.html",
        ),
        Site(
            "eds",
            "evolution-data-server-doc",
            "/usr/share/gtk-doc/html/evolution-data-server",
            "gtk-doc API reference",
        ),
        Site("tbb", "libtbb-doc", "/usr/share/doc/libtbb-dev/html", "Sphinx"),
        Site("clang", "clang-15-doc", "/usr/share/doc/clang-15/html", "Sphinx"),
        Site("nodejs", "nodejs-doc", "/usr/share/doc/nodejs/api", "hand-made HTML API docs"),
        Site("sbcl", "sbcl-doc", "/usr/share/doc/sbcl/sbcl-internals", "texinfo HTML manual"),
        Site(
            "live",
            "live-manual-html",
            "/usr/share/doc/live-manual/html/live-manual",
            "SiSU HTML manual",
            index="index.en.html",
        ),
    ),
    "web4": (
        Site(
            "cppreference",
            "cppreference-doc-en-html",
            "/usr/share/cppreference/doc/html/en",
            "wiki (MediaWiki export of cppreference.com)",
        ),
        Site(
            "twisted",
            "twisted-doc",
            "/usr/share/doc/twisted-doc/html",
            "Sphinx manual + pydoctor API reference",
        ),
        Site("adwaita", "libadwaita-1-doc", "/usr/share/doc/libadwaita-1", "gi-docgen API reference"),
        Site("icu", "icu-doc", "/usr/share/doc/icu-doc/html", "Doxygen API reference"),
        Site(
            "grass", "grass-doc", "/usr/share/doc/grass-doc/html", "generated HTML manual pages (GRASS GIS)"
        ),
        Site("junit4", "junit4-doc", "/usr/share/doc/junit4/api", "javadoc"),
        Site("cppunit", "libcppunit-doc", "/usr/share/doc/libcppunit-doc/html", "Doxygen API reference"),
        Site("vte", "libvte-2.91-doc", "/usr/share/doc/vte-2.91", "gi-docgen API reference"),
        Site("sphinx", "sphinx-doc", "/usr/share/doc/sphinx-doc/html", "Sphinx"),
        Site(
            "hdf5",
            "libhdf5-doc",
            "/usr/share/doc/libhdf5-doc/html/cpplus_RM",
            "Doxygen API reference entered by an index page",
            index="annotated.html",
        ),
        Site("soup", "libsoup2.4-doc", "/usr/share/gtk-doc/html/libsoup-2.4", "gtk-doc API reference"),
        Site("gettext", "gettext-doc", "/usr/share/doc/gettext", "texinfo HTML manual (texi2html)"),
        Site(
            "maint", "maint-guide", "/usr/share/doc/maint-guide/html", "DocBook book", index="index.en.html"
        ),
    ),
    "web5": (
        Site(
            "scipy",
            "python-scipy-doc",
            "/usr/share/doc/python-scipy-doc/html",
            "Sphinx (large API reference)",
        ),
        Site("derby", "derby-doc", "/usr/share/doc/derby-doc/javadoc/engine", "javadoc"),
        Site("gnuplot", "gnuplot-doc", "/usr/share/doc/gnuplot/htmldocs", "LaTeX2HTML manual"),
        Site(
            "exiv2",
            "libexiv2-doc",
            "/usr/share/doc/libexiv2-doc/html",
            "Doxygen API reference entered by an index page",
            index="annotated.html",
        ),
        Site(
            "gtkmm",
            "libgtkmm-3.0-doc",
            "/usr/share/doc/libgtkmm-3.0-doc/reference/html",
            "Doxygen API reference",
        ),
        Site(
            "qtcore",
            "qtbase5-doc-html",
            "/usr/share/qt5/doc/qtcore",
            "QDoc API reference (Qt Core)",
            index="qtcore-index.html",
        ),
        Site("mitscheme", "mit-scheme-doc", "/usr/share/doc/mit-scheme-doc/html", "texinfo HTML manual"),
        Site("gtk2", "libgtk2.0-doc", "/usr/share/gtk-doc/html/gtk2", "gtk-doc API reference"),
        Site(
            "telepathy",
            "libtelepathy-glib-doc",
            "/usr/share/doc/libtelepathy-glib-doc/telepathy-glib",
            "gtk-doc API reference",
        ),
        Site("rdflib", "python-rdflib-doc", "/usr/share/doc/python-rdflib-doc/html", "Sphinx"),
        Site("netcdf", "netcdf-doc", "/usr/share/doc/netCDF/html", "Doxygen manual + API"),
        Site("harden", "harden-doc", "/usr/share/doc/harden-doc/html/en-US", "DocBook book (Publican)"),
        Site("atk", "libatk1.0-doc", "/usr/share/gtk-doc/html/atk", "gtk-doc API reference"),
        Site("snakemake", "snakemake-doc", "/usr/share/doc/snakemake/html", "Sphinx"),
    ),
    "web6": (
        Site(
            "boost",
            "libboost1.81-doc",
            "/usr/share/doc/libboost1.81-doc/doc/html",
            "BoostBook/QuickBook manuals + Doxygen references",
        ),
        Site("jfreechart", "libjfreechart-java-doc", "/usr/share/doc/libjfreechart-java/javadoc", "javadoc"),
        Site("gcl", "gcl-doc", "/usr/share/doc/gcl-doc/gcl", "texinfo HTML manual"),
        Site(
            "webkitgtk",
            "libwebkit2gtk-4.0-doc",
            "/usr/share/doc/libwebkit2gtk-4.0-doc/html/webkitgtk-6.0",
            "gi-docgen API reference",
        ),
        Site("ffmpeg", "ffmpeg-doc", "/usr/share/doc/ffmpeg/api", "Doxygen API reference"),
        Site("gimp-en", "gimp-help-en", "/usr/share/gimp/2.0/help/en", "DocBook user manual (English)"),
        Site("celery", "python-celery-doc", "/usr/share/doc/python-celery-doc/html", "Sphinx"),
        Site("flex", "flex-doc", "/usr/share/doc/flex-doc/html", "texinfo HTML manual"),
        Site(
            "wsug",
            "wireshark-doc",
            "/usr/share/doc/wireshark/wsug_html_chunked",
            "DocBook book (Wireshark User's Guide)",
        ),
        Site("numba", "numba-doc", "/usr/share/doc/numba-doc/html", "Sphinx"),
        Site(
            "install",
            "installation-guide-amd64",
            "/usr/share/doc/installation-guide-amd64/en",
            "DocBook book (Debian installation guide, English)",
        ),
        Site(
            "exim",
            "exim4-doc-html",
            "/usr/share/doc/exim4-doc-html/spec_html",
            "xfpt/DocBook HTML specification",
        ),
        Site("gegl", "libgegl-doc", "/usr/share/gtk-doc/html/gegl", "gtk-doc API reference"),
        Site("devref", "developers-reference", "/usr/share/developers-reference", "Sphinx"),
    ),
}
BENCH = tuple(name for name in WEBS if name != DEFAULT)  # the webs the held-out rule draws from


def held_out() -> tuple[str, ...]:
    """The webs held out of any tuning: the bench's webs sorted by the hex SHA-256 of their name, the first
    ``HELD_OUT`` of them. The rule was fixed before anything was tuned on the bench, so that no one chose
    the held-out webs by how a policy did on them. ``docs13``, the web tuned on, is never held out."""
    return tuple(sorted(BENCH, key=lambda name: hashlib.sha256(name.encode()).hexdigest())[:HELD_OUT])


def is_held_out(web: str) -> bool:
    return web in held_out()


def names(text: str | None) -> list[str]:
    """Webs named in a comma-separated list, in its order; ``bench`` is every web, the held-out ones last.
    None or empty is the default web. ValueError for an unknown name."""
    chosen = [name.strip() for name in (text or DEFAULT).split(",") if name.strip()] or [DEFAULT]
    every = [name for name in BENCH if not is_held_out(name)] + [DEFAULT, *held_out()]
    webs = [web for name in chosen for web in (every if name == "bench" else [name])]
    if unknown := [web for web in webs if web not in WEBS]:
        raise ValueError(f"unknown real webs {unknown}; known: {', '.join(WEBS)} or bench")
    return list(dict.fromkeys(webs))


def select(web: str, sites: str | None = None) -> list[Site]:
    """The sites of ``web`` named in a comma-separated list (all when None or empty); ValueError for an
    unknown web or site."""
    if web not in WEBS:
        raise ValueError(f"unknown real web {web!r}; known: {', '.join(WEBS)}")
    return pick(WEBS[web], sites)


def address(web: str, site: Site) -> str:
    """Site i of a web listens on 127.0.0.(FIRST_ADDRESS + i)."""
    return f"127.0.0.{FIRST_ADDRESS + WEBS[web].index(site)}"
