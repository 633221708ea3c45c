"""A generated web of several sites on 127.0.0.1, with its ground truth.

The model (:mod:`.model`) is pure; :mod:`.server` serves it with Twisted Web,
:mod:`.fixture` runs that server in a subprocess for tests, benchmarks and
the offline demo, and ``python -m wirescrapy.sampleweb`` is its command line.
"""

from wirescrapy.sampleweb.fixture import SampleWebProcess
from wirescrapy.sampleweb.model import DOMAIN, GroundTruth, Reply, SampleWeb, SampleWebConfig

__all__ = ["DOMAIN", "GroundTruth", "Reply", "SampleWeb", "SampleWebConfig", "SampleWebProcess"]
