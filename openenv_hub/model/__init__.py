"""The environment model: what an environment is, what it exchanges and how it is described.

Layer: model.
"""
