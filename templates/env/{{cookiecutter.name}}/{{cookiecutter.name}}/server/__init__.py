from {{ cookiecutter.name }}.server.environment import {{ cookiecutter.class_prefix }}Environment

__all__ = ["{{ cookiecutter.class_prefix }}Environment"]
