"""Support shared by every layer: settings, progress of long waits, deprecations and the old
module names that still import, plots, running coroutines from synchronous code, importing an
author's module from its folder.

Layer: core.
"""
