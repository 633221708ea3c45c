"""What wirescrapy's offline commands share: quiet logs and validated WIRE settings."""

from __future__ import annotations

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from wirescrapy.config import WireConfig, WireSettingsError


class WireCommand(ScrapyCommand):
    requires_project = True

    def process_options(self, args, opts):
        super().process_options(args, opts)
        # These commands print their own report; Scrapy's start-up INFO lines would only bury it.
        if not opts.loglevel:
            self.settings.set("LOG_LEVEL", "WARNING", priority="cmdline")

    def wire_config(self) -> WireConfig:
        try:
            return WireConfig.from_settings(self.settings)
        except WireSettingsError as exc:
            raise UsageError(f"invalid setting: {exc}") from None
