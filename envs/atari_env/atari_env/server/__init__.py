from atari_env.server.environment import AtariEnvironment

__all__ = ["AtariEnvironment"]
