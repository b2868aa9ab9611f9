"""gradio is optional: ``import openenv_hub`` never loads it, and a missing gradio says what to install."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_importing_the_package_does_not_import_gradio():
    result = run_python(
        """
        import openenv_hub, sys
        from openenv_hub import EnvClient, create_app
        import openenv_hub.ui
        assert 'gradio' not in sys.modules, 'gradio was imported'
        """
    )
    assert result.returncode == 0, result.stderr


def test_a_server_without_the_ui_does_not_import_gradio():
    result = run_python(
        """
        import sys
        from openenv_hub import Action, create_app
        from echo_env.server.environment import EchoEnvironment
        create_app(EchoEnvironment, web=False)
        assert 'gradio' not in sys.modules
        """
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("how", ["mount_ui", "create_app"])
def test_without_gradio_the_error_names_the_extra(how):
    call = {
        "mount_ui": "mount_ui(create_app(EchoEnvironment), create_app(EchoEnvironment).state.sessions)",
        "create_app": "create_app(EchoEnvironment, web=True)",
    }[how]
    result = run_python(
        f"""
        import sys
        sys.modules['gradio'] = None  # what an environment without the extra looks like
        from openenv_hub import create_app
        from openenv_hub.errors import DependencyNotInstalledError
        from openenv_hub.ui import mount_ui
        from echo_env.server.environment import EchoEnvironment
        try:
            {call}
        except DependencyNotInstalledError as exc:
            assert isinstance(exc, ImportError)
            print(exc)
        else:
            raise SystemExit('no error')
        """
    )
    assert result.returncode == 0, result.stderr
    assert "The web UI needs the 'gradio' package" in result.stdout
    assert 'pip install "openenv-hub[ui]"' in result.stdout


def test_the_server_gets_the_web_ui_from_above_and_imports_no_ui_module():
    """create_app of the server layer mounts what was registered (the package root's create_app
    and ``import openenv_hub.ui`` register the UI); with nothing registered, web=True says what
    to import, and the server never imported a module of the UI."""
    result = run_python(
        """
        import sys
        from openenv_hub.errors import ConfigurationError
        from openenv_hub.server.app import create_app
        from echo_env.server.environment import EchoEnvironment
        try:
            create_app(EchoEnvironment, web=True)
        except ConfigurationError as exc:
            assert "openenv_hub.create_app, or import openenv_hub.ui" in str(exc), exc
        else:
            raise AssertionError("web=True mounted a UI nobody registered")
        assert not [name for name in sys.modules if name.startswith("openenv_hub.ui")]
        import openenv_hub
        openenv_hub.create_app(EchoEnvironment, web=False)
        assert not [name for name in sys.modules if name.startswith("openenv_hub.ui")]
        app = openenv_hub.create_app(EchoEnvironment, web=True)
        assert any(getattr(route, "path", "") == "/web" for route in app.routes)
        assert create_app(EchoEnvironment, web=True).state.web_ui_ready is not None
        """
    )
    assert result.returncode == 0, result.stderr
