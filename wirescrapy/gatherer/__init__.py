"""WIRE's gatherer: parses downloaded pages into links, a cleaned document and text (thesis §7.2.3)."""

from wirescrapy.gatherer.parser import Parser

__all__ = ["Parser"]
