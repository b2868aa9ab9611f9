"""Gymnasium's CartPole-v1, served over OpenEnv (``cartpole_env.server.app``)."""
