"""Shared pytest fixtures.

``sample_web`` serves the sample web (:mod:`wirescrapy.testing.sampleweb`) from a
subprocess for the whole session; every test that needs a web to crawl or to
query shares it, so its access log holds every test's requests: filter it by
host, path or time.
"""

from __future__ import annotations

import pytest

from wirescrapy.testing.sampleweb import SampleWebProcess

# The session web differs from the defaults only where a test would wait:
# the slow page answers after one second, not two.
SAMPLE_WEB_PARAMS = {"sites": 6, "pages_per_site": 40, "seed": 1, "slow_delay": 1.0}


@pytest.fixture(scope="session")
def sample_web(tmp_path_factory):
    """A running :class:`~wirescrapy.testing.sampleweb.SampleWebProcess`: ``.seeds``,
    ``.url(host, path)``, ``.truth``, ``.access_log()``, ``.port``."""
    with SampleWebProcess(workdir=tmp_path_factory.mktemp("sampleweb"), **SAMPLE_WEB_PARAMS) as web:
        yield web
