"""FastAPI routers of LocalHub, one per concern.

Layer: runtimes.
"""
