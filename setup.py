"""Packaging for pip and for Scrapyd eggs (scrapyd-deploy builds the egg from this file)."""

from setuptools import find_packages, setup

setup(
    name="wirescrapy",
    version="0.1.0",
    description="The WIRE web crawler (Castillo & Baeza-Yates) as a Scrapy project",
    packages=find_packages(include=["wirescrapy", "wirescrapy.*", "spiders", "spiders.*", "settings",
                                    "settings.*"]),
    python_requires=">=3.11",
    install_requires=[
        "Scrapy>=2.13,<2.14", "Twisted", "protego", "w3lib", "lxml", "numpy", "scipy", "xxhash",
        "zstandard", "selectolax",
    ],
    entry_points={"scrapy": ["settings = settings.default"]},
    zip_safe=False,
)
