"""``python -m wirescrapy.config > docs/settings.md``: the settings page, generated from ``SETTINGS``."""

from wirescrapy.config.page import settings_page

print(settings_page(), end="")
