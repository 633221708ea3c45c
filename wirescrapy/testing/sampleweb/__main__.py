"""Command line: serve the sample web until SIGTERM or SIGINT.

    python -m wirescrapy.testing.sampleweb --port 0 --sites 6 --pages 40 --seed 1 \\
        --access-log access.jsonl --seeds-file seeds.txt

Every :class:`~wirescrapy.testing.sampleweb.config.SampleWebConfig` field is a flag
(``--pages-per-site``, alias ``--pages``; ``--slow-delay``; ...). Once bound,
it writes the seeds file and prints one line, which
:class:`~wirescrapy.testing.sampleweb.fixture.SampleWebProcess` waits for::

    wirescrapy sample web listening on http://127.0.0.1:PORT/ ...
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from wirescrapy.testing.sampleweb.config import BROKEN_ROBOTS, JS_MODES, SampleWebConfig
from wirescrapy.testing.sampleweb.fixture import READY, option
from wirescrapy.testing.sampleweb.model import DOMAIN
from wirescrapy.testing.sampleweb.shape import SHAPES


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m wirescrapy.testing.sampleweb",
        description="Serve the WIRE sample web on 127.0.0.1, every site under its own host name.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind, 0 for any free one (default 0)")
    parser.add_argument("--interface", default="127.0.0.1", help="loopback address (default 127.0.0.1)")
    parser.add_argument("--access-log", metavar="FILE", help="write one JSON line per request here")
    parser.add_argument("--seeds-file", metavar="FILE", help="write the seed URLs here, one a line")
    for field in dataclasses.fields(SampleWebConfig):
        flags = [option(field.name)] + (["--pages"] if field.name == "pages_per_site" else [])
        parser.add_argument(
            *flags,
            dest=field.name,
            type=type(field.default),
            default=field.default,
            choices={"broken_robots": BROKEN_ROBOTS, "shape": SHAPES, "js": JS_MODES}.get(field.name),
            help=f"{field.metadata['help']} (default {field.default})",
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        fields = dataclasses.fields(SampleWebConfig)
        config = SampleWebConfig(**{field.name: getattr(args, field.name) for field in fields})
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    from twisted.internet import reactor

    from wirescrapy.testing.sampleweb.server import listen

    access_log = open(args.access_log, "a", encoding="utf-8") if args.access_log else None
    try:
        server = listen(config, args.port, args.interface, access_log, reactor)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.seeds_file:
        with open(args.seeds_file, "w", encoding="utf-8") as seeds:
            seeds.writelines(url + "\n" for url in server.web.seeds())
    print(
        f"{READY} http://{args.interface}:{server.port}/"
        f" ({config.sites} sites x {config.pages_per_site} pages"
        f"{'' if config.shape == 'uniform' else ' ' + config.shape},"
        f" seed {config.seed}; map *.{DOMAIN} to {args.interface} to crawl it)",
        flush=True,
    )
    # reactor.run() turns SIGINT and SIGTERM into a clean reactor.stop().
    reactor.run()
    if access_log is not None:
        access_log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
