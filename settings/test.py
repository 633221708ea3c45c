"""Settings for tests and the offline demo: the sample web's host names resolve to loopback, and
loopback is allowed (by default the crawler refuses it, as WIRE's blocked-ip does)."""

from settings.default import *
from wirescrapy.config import BLOCKED_NETWORKS

WIRE_BLOCKED_IPS = [net for net in BLOCKED_NETWORKS if net not in ("127.0.0.0/8", "::1/128")]
WIRE_DNS_HOSTS = {"wire.test": "127.0.0.1"}
WIRE_WAIT_NORMAL = 0.2
WIRE_WAIT_LARGE_SITE = 0.05
WIRE_POLITENESS_GROUP = "host"  # every sample site is on 127.0.0.1: by address, one site at a time
# Whole batches: softmin's early end depends on timing, and tests compare what a cycle fetched (its own test,
# tests/e2e/test_batch_end.py, sets it; benchmarks/realweb_makespan.py runs the crawler's default).
WIRE_SOFTMIN = 0
# Batches as one manager run chooses them: a batch planned ahead leaves out the links found in the batch's
# last moments, so it depends on timing (tests/test_batchend.py and tests/e2e/test_batch_end.py set it).
WIRE_PLAN_AHEAD = False
WIRE_COLLECTION_DIR = "./collection-test"
