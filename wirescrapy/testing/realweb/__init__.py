"""Webs of real documents for benchmarks: Debian documentation packages served by nginx on loopback.

    with RealWeb(workdir) as web:          # installs missing packages (root), starts nginx
        web.seeds, web.dns_hosts            # the home pages; WIRE_DNS_HOSTS mapping each host to its address
        web.truth, web.pagerank             # what a polite crawl finds, read from the files
        web.requests()                      # nginx's access log so far
    RealWeb(workdir, web="web3")            # another web of the bench (``webs.WEBS``), the same way

Every site of a web (``webs.WEBS``; ``docs13``, ``sites.SITES``, unless named) is one package's HTML tree on
its own address 127.0.0.x, all on one free high port, under the host name ``<name>.realweb.test``.
``python -m wirescrapy.testing.realweb [--web NAME]`` installs, serves and describes it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Self

from wirescrapy.testing import nginx
from wirescrapy.testing.realweb import sites, truth, webs
from wirescrapy.testing.realweb.sites import SITES, Site

__all__ = ["SITES", "RealWeb", "Site", "nginx", "sites", "truth", "webs"]


class RealWeb:
    """The chosen sites of the web named ``web`` (all of them by default) served by one nginx; the ground
    truth computed on entering."""

    def __init__(
        self,
        workdir: str | Path | None = None,
        chosen: list[Site] | None = None,
        install: bool = True,
        web: str = webs.DEFAULT,
    ):
        if web not in webs.WEBS:
            raise ValueError(f"unknown real web {web!r}; known: {', '.join(webs.WEBS)}")
        if strangers := [site.name for site in chosen or () if site not in webs.WEBS[web]]:
            raise ValueError(f"sites {strangers} are not of the real web {web!r}")
        self.name = web
        self.held_out = webs.is_held_out(web)
        self.sites = list(chosen or webs.WEBS[web])
        self.keep = workdir is not None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="wire-realweb-"))
        self.install = install
        self.addresses = {site.name: webs.address(web, site) for site in self.sites}
        self.server: nginx.Nginx | None = None
        self.truth: truth.RealTruth | None = None
        self.pagerank: dict[str, float] = {}

    @property
    def port(self) -> int:
        return self.server.port

    def origin(self, site: Site) -> str:
        return f"http://{site.host}:{self.port}"

    @property
    def seeds(self) -> list[str]:
        return [self.origin(site) + "/" for site in self.sites]

    @property
    def dns_hosts(self) -> dict[str, str]:
        return {site.host: self.addresses[site.name] for site in self.sites}

    def site_of(self, url: str) -> Site | None:
        host = url.split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0]
        return next((site for site in self.sites if site.host == host), None)

    def requests(self, since: float = 0.0) -> list[nginx.Request]:
        return nginx.read_log(self.server.access_log, since) if self.server.access_log.exists() else []

    def start(self) -> None:
        if self.install:
            sites.install(self.sites)
        elif absent := sites.missing(self.sites):
            raise RuntimeError(f"real web: not installed: {' '.join(sites.packages(absent))}")
        servers = [
            nginx.Server(site.host, self.addresses[site.name], site.root, site.index) for site in self.sites
        ]
        self.server = nginx.Nginx(servers, self.workdir / "nginx")
        self.server.start()
        self.truth = truth.with_port(self._walk(), self.port)
        self.pagerank = truth.pagerank(self.truth)

    def _walk(self) -> truth.RealTruth:
        """The truth on port-less origins, kept in the temporary directory for the installed packages'
        versions and the files under the sites' roots (the walk reads every page: most of a minute). The
        files count apart: other packages add files to a site's directory (``benchmarks/language.py``
        installs Debian Reference's other languages beside the English one, which its pages link to)."""
        query = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Package} ${Version}\n", *sites.packages(self.sites)],
            check=False,
            capture_output=True,
            text=True,
        )
        files = hashlib.sha256()
        for site in self.sites:
            for directory, _, names in sorted(os.walk(site.root)):
                for name in sorted(names):
                    path = os.path.join(directory, name)
                    files.update(
                        f"{path}\0{os.path.getsize(path) if os.path.isfile(path) else -1}\n".encode()
                    )
        key = hashlib.sha256(
            repr(
                (
                    [(s.name, s.root, s.index) for s in self.sites],
                    query.stdout,
                    files.hexdigest(),
                    truth.MAX_FILE_SIZE,
                    truth.MAX_DEPTH,
                )
            ).encode()
        ).hexdigest()[:16]
        cache = Path(tempfile.gettempdir()) / f"wire-realweb-truth-{key}.pickle"
        if query.returncode == 0 and cache.exists():
            with open(cache, "rb") as file:
                return pickle.load(file)
        walked = truth.walk([truth.Host(f"http://{site.host}", site.root, site.index) for site in self.sites])
        if query.returncode == 0:
            partial = cache.with_suffix(f".{os.getpid()}")
            with open(partial, "wb") as file:
                pickle.dump(walked, file)
            os.replace(partial, cache)
        return walked

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
        if not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
