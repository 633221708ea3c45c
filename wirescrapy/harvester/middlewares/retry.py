"""Retries within a batch: Scrapy's, with giving up logged as INFO."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.retry import RetryMiddleware, get_retry_request

if TYPE_CHECKING:
    from scrapy import Request, Spider


class _GiveUpAsInfo(logging.LoggerAdapter):
    def error(self, msg, *args, **kwargs) -> None:
        self.info(msg, *args, **kwargs)


class WireRetryMiddleware(RetryMiddleware):
    """Scrapy's retries (``RETRY_TIMES`` = ``WIRE_MAX_ERRORS_SAME_BATCH`` − 1), with "gave up retrying"
    logged as INFO: a page that keeps failing is recorded with its error, the normal course of a crawl, not
    an error of the crawler."""

    _logger = _GiveUpAsInfo(logging.getLogger(__name__), {})

    def _retry(self, request: Request, reason, spider: Spider) -> Request | None:
        return get_retry_request(
            request,
            reason=reason,
            spider=spider,
            max_retry_times=request.meta.get("max_retry_times", self.max_retry_times),
            priority_adjust=request.meta.get("priority_adjust", self.priority_adjust),
            logger=self._logger,
        )
