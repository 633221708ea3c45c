"""The seeder: which URLs enter the collection, in what canonical form (thesis §7.2.4)."""

from .canonical import canonicalize

__all__ = ["canonicalize"]
