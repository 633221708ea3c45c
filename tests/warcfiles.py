"""What every test of WARC files asks of them: ``warcio check`` passes, and FastWARC, a second reader written
apart from warcio (Rust), reads every record with its digests right."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fastwarc.warc import ArchiveIterator, WarcRecordType


def warcio_check(*files: Path) -> None:
    """``warcio check`` on ``files``: every record's block and payload digest."""
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from warcio.cli import main; sys.exit(main())",
            "check",
            "-v",
            *map(str, files),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "digest pass" in run.stdout and "digest fail" not in run.stdout, run.stdout[-3000:]


def fastwarc_records(file: Path) -> list[tuple[str, str, dict]]:
    """(type, target URI, WARC headers) of every record FastWARC reads in ``file``, each record's block digest
    verified, and a response's payload digest too."""
    records = []
    with open(file, "rb") as stream:
        for record in ArchiveIterator(stream, parse_http=False, record_types=WarcRecordType.any_type):
            headers = dict(record.headers.items())
            assert record.verify_block_digest(consume=False), (file, headers)
            records.append((str(record.record_type), headers.get("WARC-Target-URI", ""), headers))
    with open(file, "rb") as stream:
        for record in ArchiveIterator(stream, parse_http=True, record_types=WarcRecordType.response):
            assert record.verify_payload_digest(consume=False), (file, dict(record.headers.items()))
    return records
