"""Rendering benchmark: JavaScript pages through a real Splash 3.5 (``WIRE_RENDER_JS``), against raw fetches.

    python -m benchmarks.splash                # full size (a few minutes on 2 cores)
    python -m benchmarks.splash --smoke        # CI: tiny sizes
    python -m benchmarks.splash --splash http://127.0.0.1:8050

Uses the Splash that answers at ``--splash`` (``SPLASH_URL``'s default, http://127.0.0.1:8050), else starts
one of its own (``wirescrapy/testing/splash``, whose ``install.sh`` installs it). Everything else runs here:
the sample web in a subprocess (``js="on"``: the script pages of ``wirescrapy/testing/sampleweb/scripts.py``)
and each crawl a ``scrapy crawl harvester`` subprocess with ``settings.test``. Printed, with the parameters:

1. **Renders per second through Splash**: the crawler's own render request (``harvester/render.py``: the Lua
   script, its arguments) posted to ``/execute`` for the sample web's script pages, ``--renders`` of them, one
   at a time and ``--parallel`` at once; the baseline is a plain GET of the same pages from the same client,
   in the same run.
2. **A crawl with rendering against without** (same sample web, same run): the harvester over ``--sites`` x
   ``--pages`` with waits 0, every page rendered (``WIRE_RENDER_JS=.wire.test``) and none (``off``):
   pages/s of each (pages fetched with 200 over the wall time of the run, start-up included) and the ratio;
   then why any page fetched was not rendered (its render state and error in the collection) and how many
   renders found Splash not answering (the crawl's warnings).
3. **The automatic mode on a mixed web**: the sample web with its script pages (``--mixed-sites`` x
   ``--mixed-pages``, a few script-built pages among ordinary ones), ``WIRE_RENDER_JS=auto``, waits 0: the
   share of fetched pages rendered (probed because they looked script-built, or on a site marked as helped),
   the links gained (``render_links`` summed) against the ground truth's links that only scripts show, and the
   ground truth's pages found.

Nothing here asserts a time: the figures are printed for a person to read.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from scrapy.settings import Settings

from wirescrapy.collection import Collection
from wirescrapy.collection.metadata import RenderState
from wirescrapy.config import WireConfig
from wirescrapy.harvester.render import render_request
from wirescrapy.items import FetchError
from wirescrapy.testing.process import run_scrapy, scrapy_env
from wirescrapy.testing.sampleweb import SampleWebProcess
from wirescrapy.testing.splash import DEFAULT_URL, SplashMissing, running_splash

FAST = {
    "WIRE_WAIT_NORMAL": 0,
    "WIRE_WAIT_LARGE_SITE": 0,
    "WIRE_BATCH_SIZE": 100_000,
    "WIRE_MAX_DEPTH_STATIC": 6,
    "LOG_LEVEL": "WARNING",
}


def post(splash: str, args: dict) -> dict:
    request = urllib.request.Request(
        splash.rstrip("/") + "/execute",
        data=json.dumps(args).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def get(url: str, port: int) -> bytes:
    host = url.split("/")[2]
    request = urllib.request.Request(url.replace(host, f"127.0.0.1:{port}", 1), headers={"Host": host})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return answer.read()


def rate(work, items: list, parallel: int) -> float:
    start = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(work, items))
    return len(items) / (time.perf_counter() - start)


def renders_per_second(splash: str, renders: int, parallel: int) -> None:
    with SampleWebProcess(sites=6, pages_per_site=4, js="on") as web:
        pages = [url for url in web.truth.scripted if url not in web.truth.endless]
        config = WireConfig.from_settings(
            Settings({"WIRE_DNS_HOSTS": {"wire.test": "127.0.0.1"}, "WIRE_RENDER_WAIT": 0.2})
        )
        args = [
            render_request(
                url, config, "wirescrapy-benchmark", how="direct", meta={}, callback=None, errback=None
            ).meta["splash"]["args"]
            for url in pages
        ]
        work = (args * (renders // len(args) + 1))[:renders]
        urls = [a["url"] for a in work]
        assert all(post(splash, a).get("ok") for a in args[:2]), "Splash did not render"
        print(
            f"1. renders/s through Splash at {splash} ({renders} renders of {len(pages)} script pages, "
            f"WIRE_RENDER_WAIT=0.2; baseline: plain GETs of the same pages, same client)"
        )
        for n in (1, parallel):
            rendered = rate(lambda a: post(splash, a), work, n)
            raw = rate(lambda u: get(u, web.port), urls, n)
            print(
                f"   {n} at once: {rendered:7.1f} renders/s  | raw GETs {raw:8.1f}/s  | "
                f"raw/render x{raw / rendered:.0f}"
            )


def crawl(web: SampleWebProcess, workdir: Path, render: str, splash: str, cycles: int) -> tuple[float, dict]:
    collection = workdir / f"collection-{render.strip('.') or 'off'}"
    settings = {"WIRE_COLLECTION_DIR": collection, "WIRE_RENDER_JS": render, "SPLASH_URL": splash, **FAST}
    start = time.perf_counter()
    run = run_scrapy(
        "crawl",
        "harvester",
        "-a",
        f"seeds={web.seeds_file}",
        "-a",
        f"cycles={cycles}",
        settings=settings,
        env=scrapy_env(),
        timeout=None,
    )
    elapsed = time.perf_counter() - start
    if run.returncode:
        raise SystemExit(f"crawl failed:\n{run.stderr[-3000:]}")
    with Collection(collection, readonly=True) as store:
        docs = store.documents.records[1 : store.documents.count + 1]
        ok = (docs["status"] == 200) & (docs["visits"] > 0)
        figures = {
            "pages": int(ok.sum()),
            "rendered": int(((docs["render"] == RenderState.RENDERED) & (docs["status"] == 200)).sum()),
            "gained": int(docs["render_links"].sum()),
            "urls": {store.url(i + 1) for i in range(len(docs)) if docs[i]["status"] == 200},
            "not rendered": Counter(
                (
                    RenderState(int(d["render"])).name.lower(),
                    FetchError(int(d["error"])).label if d["error"] else "no error",
                )
                for d in docs[ok & (docs["render"] != RenderState.RENDERED)]
            ),
            "splash down": run.stderr.count("Splash did not answer"),
        }
    return elapsed, figures


def outcomes(figures: dict) -> str:
    """The pages fetched with 200 that were not rendered, by render state and error, and the renders that
    found Splash not answering: why a crawl rendered fewer pages than it fetched."""
    kinds = ", ".join(
        f"{count} {state} ({error})" for (state, error), count in figures["not rendered"].most_common()
    )
    return f"not rendered: {kinds or 'none'}; Splash did not answer {figures['splash down']} time(s)"


def with_and_without(splash: str, sites: int, pages: int) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        SampleWebProcess(
            sites=sites,
            pages_per_site=pages,
            js="on",
            slow_delay=0.0,
            crawl_delay=0.0,
            broken_robots="malformed",
        ) as web,
    ):
        results = {mode: crawl(web, Path(tmp), mode, splash, cycles=8) for mode in ("off", ".wire.test")}
    (off_s, off), (on_s, on) = results["off"], results[".wire.test"]
    print(f"2. crawl of {sites} sites x {pages} pages, waits 0, 8 cycles, start-up included (same run):")
    print(f"   without rendering: {off['pages']} pages in {off_s:.1f} s = {off['pages'] / off_s:.1f} pages/s")
    print(
        f"   every page rendered: {on['pages']} pages ({on['rendered']} rendered) in {on_s:.1f} s = "
        f"{on['pages'] / on_s:.1f} pages/s; x{(off['pages'] / off_s) / (on['pages'] / on_s):.1f} slower"
    )
    print(f"   {outcomes(on)}")


def mixed(splash: str, sites: int, pages: int) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        SampleWebProcess(
            sites=sites,
            pages_per_site=pages,
            js="on",
            slow_delay=0.0,
            crawl_delay=0.0,
            broken_robots="malformed",
        ) as web,
    ):
        elapsed, auto = crawl(web, Path(tmp), "auto", splash, cycles=10)
        truth, rendered_truth = web.truth, web.web.ground_truth(rendered=True)
    scripted = sum(len(links) for links in truth.scripted.values())
    found = len(rendered_truth.pages & auto["urls"])
    print(
        f"3. auto mode on a mixed web of {sites} sites x {pages} pages "
        f"({len(truth.scripted)} script-built pages):"
    )
    print(
        f"   {auto['rendered']} of {auto['pages']} fetched pages rendered "
        f"({100 * auto['rendered'] / auto['pages']:.1f}%), "
        f"{auto['gained']} links gained (the ground truth's script-only links: {scripted}); "
        f"{found} of {len(rendered_truth.pages)} pages of the rendered ground truth found; {elapsed:.1f} s"
    )
    print(f"   {outcomes(auto)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splash", default=DEFAULT_URL)
    parser.add_argument("--renders", type=int, default=60)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--sites", type=int, default=4)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--mixed-sites", type=int, default=12)
    parser.add_argument("--mixed-pages", type=int, default=40)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (CI)")
    args = parser.parse_args()
    if args.smoke:
        args.renders, args.parallel, args.sites, args.pages, args.mixed_sites, args.mixed_pages = (
            8,
            2,
            2,
            6,
            6,
            6,
        )
    try:
        with (
            tempfile.TemporaryDirectory(prefix="wire-splash-") as logs,
            running_splash(args.splash, Path(logs)) as splash,
        ):
            renders_per_second(splash, args.renders, args.parallel)
            with_and_without(splash, args.sites, args.pages)
            mixed(splash, args.mixed_sites, args.mixed_pages)
    except SplashMissing as missing:
        parser.exit(2, f"{missing}\n")


if __name__ == "__main__":
    main()
