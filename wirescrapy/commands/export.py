"""``scrapy export WHAT``: the collection for those who analyse it elsewhere (WIRE's ``wire-info-extract``).

``WHAT`` is ``documents`` (URL and metadata, optionally the stored document or its text; selected by doc-id
range, URL pattern, site or depth; ``--near-duplicates``: the near-duplicate pages, each with its cluster and
its representative's URL), ``links`` (the link graph as an edge list of doc-ids), ``sites`` or
``seeds``; as JSON Lines or CSV, to stdout or a file. ``--warc FILE`` writes the stored pages as WARC response
records instead (``wirescrapy/warc/export.py``; an exact duplicate as a ``revisit`` of its original).
``--cdxj FILE`` and ``--wacz FILE`` are of the crawl's archive (``WIRE_WARC_DIR``, every WARC file in it).
The first writes one sorted CDXJ index of them all, pywb's format (``wirescrapy/warc/index.py``; a file's own
index is made if a kill left it none). The second writes one WACZ file, validated with the ``wacz`` package
(``wirescrapy/warc/wacz.py``). Rows are streamed (``wirescrapy/report/export.py``): exporting ten million
documents holds one chunk of them in memory. It opens the collection read-only and takes no lock, as
``scrapy status`` does.

Options are grouped by what they select, so that a new kind of output is one more group and one more entry
in ``EXPORTS``.
"""

from __future__ import annotations

import re
import sys
from contextlib import nullcontext

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from wirescrapy.commands.base import InputError, WireCommand


def _exports():
    """The report's export module: imported when the command runs, not at the start of every command (Scrapy
    imports every command module, a crawl job's start-up included)."""
    from wirescrapy.report import export

    return export


def _range(text: str, what: str) -> tuple[int, int | None]:
    """ "N", "A-B", "A-" as (first, last or None)."""
    match = re.fullmatch(r"\s*(\d+)\s*(?:(-)\s*(\d*)\s*)?", text)
    if not match:
        raise InputError(f"{what} must be N, A-B or A-, not {text!r}")
    first = int(match.group(1))
    if not match.group(2):
        return first, first
    last = int(match.group(3)) if match.group(3) else None
    if last is not None and last < first:
        raise InputError(f"{what} {text!r}: the end is before the start")
    return first, last


class Command(WireCommand, ScrapyCommand):
    def syntax(self):
        return f"{{{','.join(_exports().EXPORTS)}}} [options] | --warc FILE | --cdxj FILE | --wacz FILE"

    def short_desc(self):
        return "Export documents, the link graph, sites or seeds as JSON Lines or CSV"

    def add_options(self, parser):
        super().add_options(parser)
        export = _exports()
        out = parser.add_argument_group("output")
        out.add_argument("--format", choices=export.FORMATS, default="jsonl", help="default: %(default)s")
        out.add_argument(
            "--output", "-O", metavar="FILE", default="-", help="file to write (default: stdout)"
        )
        out.add_argument(
            "--warc",
            metavar="FILE",
            help="write the stored pages as WARC response records to FILE "
            "(gzipped per record) instead of WHAT",
        )
        out.add_argument(
            "--cdxj",
            metavar="FILE",
            help="write one CDXJ index of the WARC files of WIRE_WARC_DIR to FILE ('-': stdout) "
            "instead of WHAT",
        )
        out.add_argument(
            "--wacz",
            metavar="FILE",
            help="write the WARC files of WIRE_WARC_DIR as one WACZ file instead of WHAT",
        )
        select = parser.add_argument_group("which documents (documents, links)")
        select.add_argument("--docids", metavar="A-B", help="doc-ids: N, A-B or A- (links: of the source)")
        select.add_argument("--url", metavar="REGEX", default="", help="URLs matching the regular expression")
        select.add_argument(
            "--site",
            action="append",
            default=[],
            metavar="ORIGIN",
            help="documents of the site (scheme://host[:port]); repeatable",
        )
        select.add_argument("--depth", metavar="A-B", help="depth: N, A-B or A-")
        select.add_argument("--fetched", action="store_true", help="fetched documents only")
        select.add_argument(
            "--near-duplicates",
            action="store_true",
            help="documents: the near-duplicate pages only (not their clusters' representatives), with "
            "their cluster and its representative's URL",
        )
        select.add_argument(
            "--content",
            choices=export.CONTENTS,
            default="none",
            help="add the stored cleaned document or its text (default: %(default)s)",
        )

    def run(self, args, opts):
        chosen = [name for name in ("warc", "cdxj", "wacz") if getattr(opts, name)]
        if len(chosen) > 1:
            raise UsageError(f"give one of --{' / --'.join(chosen)}")
        if chosen and args:
            raise UsageError(f"--{chosen[0]} writes an archive: give no WHAT with it")
        if opts.warc:
            self.export_warc(opts.warc)
            return
        if opts.cdxj:
            self.export_cdxj(opts.cdxj)
            return
        if opts.wacz:
            self.export_wacz(opts.wacz)
            return
        export = _exports()
        if len(args) != 1 or args[0] not in export.EXPORTS:
            raise UsageError(f"say what to export: one of {', '.join(export.EXPORTS)}")
        selection = self.selection(opts)
        config = self.wire_config()
        collection = self.read_collection(config)
        try:
            # The file is closed by the `with` below, with the collection.
            target = (
                nullcontext(sys.stdout)
                if opts.output == "-"
                else open(opts.output, "w", encoding="utf-8", newline="")
            )
        except OSError as exc:
            raise InputError(f"cannot write {opts.output}: {exc}") from None
        with collection, target as stream:
            writer = export.RowWriter(stream, opts.format)
            try:
                for row in export.EXPORTS[args[0]](collection, selection):
                    writer.write(row)
            except BrokenPipeError:  # `scrapy export … | head`: the reader has what it wanted
                sys.stderr.close()
                return
        if opts.output != "-":
            print(f"{writer.rows:,} {args[0]} rows written to {opts.output}", file=sys.stderr)

    def export_warc(self, path: str) -> None:
        from wirescrapy.warc.export import write_collection_warc

        collection = self.read_collection(self.wire_config())
        try:
            with collection:
                written = write_collection_warc(collection, path)
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
        print(f"{written:,} stored pages written to {path} as WARC", file=sys.stderr)

    def archive(self) -> list:
        """The WARC files of the crawl's archive (``WIRE_WARC_DIR``)."""
        from wirescrapy.warc.reader import WarcError, warc_files

        directory = self.wire_config().warc_dir
        if not directory:
            raise InputError("no archive: set WIRE_WARC_DIR to the directory the harvests archived into")
        try:
            files = warc_files(directory)
        except WarcError as exc:
            raise InputError(str(exc)) from None
        if not files:
            raise InputError(f"{directory}: no WARC files (*.warc.gz)")
        return files

    def export_cdxj(self, path: str) -> None:
        from wirescrapy.warc.index import BadIndex, merged

        files = self.archive()
        lines = 0
        try:
            target = nullcontext(sys.stdout) if path == "-" else open(path, "w", encoding="utf-8")
            with target as out:
                for line in merged(files):
                    out.write(line)
                    lines += 1
        except BadIndex as exc:
            raise InputError(str(exc)) from None
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
        print(f"{lines:,} records of {len(files):,} WARC files indexed in {path}", file=sys.stderr)

    def export_wacz(self, path: str) -> None:
        from wirescrapy.warc.index import BadIndex
        from wirescrapy.warc.wacz import WaczError, write_wacz

        files = self.archive()
        try:
            pages = write_wacz(files, path, title=f"wirescrapy crawl of {self.wire_config().collection_dir}")
        except (BadIndex, WaczError) as exc:
            raise InputError(str(exc)) from None
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
        print(f"{len(files):,} WARC files and {pages:,} pages written to {path} as WACZ", file=sys.stderr)

    @staticmethod
    def selection(opts):
        if opts.near_duplicates and opts.content != "none":
            raise UsageError("--near-duplicates lists URLs and clusters: give no --content with it")
        selection = _exports().Selection(
            sites=tuple(opts.site),
            content=opts.content,
            fetched_only=opts.fetched,
            near_duplicates=opts.near_duplicates,
        )
        if opts.docids:
            selection.first, selection.last = _range(opts.docids, "--docids")
        if opts.depth:
            selection.min_depth, selection.max_depth = _range(opts.depth, "--depth")
        if opts.url:
            try:
                re.compile(opts.url)
            except re.error as exc:
                raise InputError(f"--url {opts.url!r}: {exc}") from None
            selection.pattern = opts.url
        return selection
