"""``openenv_hub.providers`` (the runtimes' old name) still imports, warns, and gives the very
objects of ``openenv_hub.runtimes``."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CODE = """
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from openenv_hub.providers import (
        DockerProvider, DockerSwarmProvider, KubernetesProvider, LocalProcessProvider, Provider,
        RayProvider, StopsOnExit, UvProvider,
    )
    from openenv_hub.providers.swarm import DockerSwarmProvider as swarm_class
    from openenv_hub.providers.kubernetes_manifests import kubernetes_objects, to_yaml
    from openenv_hub.providers.labels import MANAGED

import openenv_hub.runtimes as new
from openenv_hub.runtimes import docker, kubernetes, kubernetes_manifests, labels, local, ray, swarm, uv

assert (Provider, StopsOnExit) == (new.Provider, new.StopsOnExit)
assert DockerProvider is docker.DockerProvider and RayProvider is ray.RayProvider
assert DockerSwarmProvider is swarm_class is swarm.DockerSwarmProvider
assert UvProvider is uv.UvProvider and LocalProcessProvider is local.LocalProcessProvider
assert KubernetesProvider is kubernetes.KubernetesProvider
assert (kubernetes_objects, to_yaml) == (kubernetes_manifests.kubernetes_objects, kubernetes_manifests.to_yaml)
assert MANAGED == labels.MANAGED
warned = {str(w.message): w.filename for w in caught if w.category is DeprecationWarning}
print(sorted(warned.items()))
"""


def test_the_old_names_import_warn_and_are_the_same_objects() -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CODE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    warned = dict(eval(done.stdout))
    new = "import openenv_hub.runtimes{} instead."
    assert warned == {
        f"openenv_hub.providers is deprecated and will be removed in 0.2: {new.format('')}": "<string>",
        f"openenv_hub.providers.swarm is deprecated and will be removed in 0.2: {new.format('.swarm')}": "<string>",
        "openenv_hub.providers.kubernetes_manifests is deprecated and will be removed in 0.2: "
        f"{new.format('.kubernetes_manifests')}": "<string>",
        f"openenv_hub.providers.labels is deprecated and will be removed in 0.2: {new.format('.labels')}": "<string>",
    }
