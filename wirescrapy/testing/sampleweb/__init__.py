"""A generated web of several sites on 127.0.0.1, with its ground truth.

The model is pure: :mod:`.model` routes every request to its reply, the pages'
links and HTML come from :mod:`.content`, the other files from :mod:`.files`,
the sites' sizes from :mod:`.shape`, all from the parameters in :mod:`.config`;
:mod:`.truth` crawls the model for the ground truth. :mod:`.server` serves it
with Twisted Web, :mod:`.fixture` runs that server in a subprocess for tests,
benchmarks and the offline demo, and ``python -m wirescrapy.testing.sampleweb`` is its
command line.
"""

from wirescrapy.testing.sampleweb.config import SampleWebConfig
from wirescrapy.testing.sampleweb.fixture import SampleWebProcess
from wirescrapy.testing.sampleweb.model import DOMAIN, Reply, SampleWeb
from wirescrapy.testing.sampleweb.truth import GroundTruth

__all__ = ["DOMAIN", "GroundTruth", "Reply", "SampleWeb", "SampleWebConfig", "SampleWebProcess"]
