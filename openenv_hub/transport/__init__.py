"""Transport: how an environment's app is served (uvicorn and its HTTP and WebSocket
protocols) and how requests are relayed, ports found and health awaited.

Layer: core.
"""
