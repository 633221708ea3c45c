"""``python -m wirescrapy.config > docs/settings.md``: the settings page, generated from ``SETTINGS``."""

from wirescrapy.config.table import settings_page

print(settings_page(), end="")
