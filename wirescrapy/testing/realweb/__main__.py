"""Install, serve and describe a real-document web.

python -m wirescrapy.testing.realweb            # install what is missing, describe each site, exit
python -m wirescrapy.testing.realweb --serve    # ... then serve until Ctrl-C (prints the crawl settings)
python -m wirescrapy.testing.realweb --sites apache,git --workdir /tmp/rw
python -m wirescrapy.testing.realweb --web web3  # another web of the bench (webs.py)
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time

from wirescrapy.testing.realweb import RealWeb, sites, webs


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--web",
        default=webs.DEFAULT,
        choices=list(webs.WEBS),
        help=f"the web (default {webs.DEFAULT}, the one tuned on; held out: {', '.join(webs.held_out())})",
    )
    parser.add_argument(
        "--sites",
        help=f"comma-separated sites of the web (default: all); {webs.DEFAULT}'s: {', '.join(sites.BY_NAME)}",
    )
    parser.add_argument("--serve", action="store_true", help="keep serving until interrupted")
    parser.add_argument(
        "--workdir", help="nginx's configuration and logs here (default: a temporary directory)"
    )
    parser.add_argument("--no-install", action="store_true", help="fail instead of running apt-get")
    args = parser.parse_args()
    try:
        chosen = webs.select(args.web, args.sites)
    except ValueError as error:
        parser.error(str(error))
    started = time.perf_counter()
    try:
        web = RealWeb(args.workdir, chosen, install=not args.no_install, web=args.web)
        web.start()
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    try:
        truth, rank = web.truth, web.pagerank
        print(
            f"real web {args.web}{' (held out of tuning)' if web.held_out else ''}: {len(chosen)} sites on "
            f"port {web.port}, {len(truth.pages)} pages, "
            f"{sum(len(v) for v in truth.links.values())} links, {len(truth.redirects)} redirects, "
            f"{len(truth.errors)} broken links, {len(truth.too_deep)} too deep "
            f"({time.perf_counter() - started:.1f} s)"
        )
        print(f"{'site':<12} {'address':<11} {'pages':>6} {'PageRank':>8}  {'held out':<8}  kind (package)")
        for site in chosen:
            origin = web.origin(site) + "/"
            pages = [url for url in truth.pages if url.startswith(origin)]
            value = sum(rank[url] for url in pages)
            print(
                f"{site.name:<12} {web.addresses[site.name]:<11} {len(pages):6d} {value:8.3f}  "
                f"{'yes' if site.held_out else '':<8}  {site.kind} ({site.package})"
            )
        if args.serve:
            print("seeds:\n" + "\n".join(web.seeds))
            print(
                f"crawl with: -s 'WIRE_DNS_HOSTS={json.dumps(web.dns_hosts)}'; "
                f"access log {web.server.access_log}"
            )
            print("serving; Ctrl-C stops", flush=True)
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
    finally:
        web.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
