"""pywb, the replay tool the archive's end-to-end test opens pages through (``tests/e2e/test_warc.py``).

``install.sh`` installs it into a virtualenv of its own: its dependencies would replace the project's.
"""
