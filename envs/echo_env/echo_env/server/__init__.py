from echo_env.server.environment import EchoEnvironment

__all__ = ["EchoEnvironment"]
