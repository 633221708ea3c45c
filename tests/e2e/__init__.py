"""End-to-end: real crawls, commands and servers, checked from the outside."""
