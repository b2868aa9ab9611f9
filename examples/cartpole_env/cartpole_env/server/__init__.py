"""The CartPole server."""
