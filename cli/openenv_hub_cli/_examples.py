"""The examples at the end of each command's ``--help``, in one table.

Each :class:`Example` says what else it needs (``needs``): nothing but the files an earlier
example makes (``openenv init my_env``), ``HUB`` (a Hub and a token), ``SERVES`` (it serves
until stopped), or a sentence saying what (a Docker engine, a running server, ...).
``tests/cli/test_help.py`` shows every command's help and runs every example that needs
nothing, the Hub (against LocalHub) or serves (until it answers), naming those it skips. The
groups (``deploy``, ``cache``, ...) and the root show some of their commands' examples.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXAMPLES", "HUB", "SERVES", "Example"]

HUB = "the Hub"
SERVES = "a server left running"
_DOCKER = "a Docker engine"


@dataclass(frozen=True)
class Example:
    """A command line as typed, what it does, and what it needs besides this machine."""

    line: str
    what: str
    needs: str = ""
    cwd: str = ""  # where it is typed, relative to where 'openenv init my_env' ran


EXAMPLES: dict[str, list[Example]] = {
    "init": [
        Example("openenv init my_env --no-input", "a new environment in ./my_env, no questions"),
        Example(
            'openenv init chess_env -o envs -d "Chess against a bot"',
            "in envs/chess_env, with a description",
        ),
    ],
    "serve": [
        Example(
            "openenv serve",
            "the environment in this folder, on its manifest's port",
            SERVES,
            cwd="my_env",
        ),
        Example("openenv serve my_env --web --port 8001", "with the web UI at /web", SERVES),
        Example("openenv serve guess.py", "the app a Python file defines", SERVES),
        Example(
            "openenv serve my_env.server.app:app",
            "an app by its import path, from this folder",
            SERVES,
            cwd="my_env",
        ),
        Example("openenv serve gym:CartPole-v1", "a Gymnasium environment, no code", SERVES),
        Example("openenv serve my_env --runtime docker", "build its image and run it", _DOCKER),
        Example(
            "openenv serve my_env --ray auto --replicas 2",
            "two replicas on Ray",
            "a Ray cluster at $RAY_ADDRESS",
        ),
    ],
    "validate": [
        Example("openenv validate my_env --level static", "read the files only"),
        Example("openenv validate my_env --json", "import, serve and drive it; JSON report"),
        Example(
            "openenv validate http://127.0.0.1:8000 --wait 30",
            "a running server (any OpenEnv one)",
            "a running server",
        ),
        Example("openenv validate my_env --level docker", "build and run the image", _DOCKER),
    ],
    "build": [
        Example("openenv build my_env", "the image the Space will build", _DOCKER),
        Example("openenv build my_env -t my_env:dev --no-cache", "a tag, no cache", _DOCKER),
    ],
    "push": [
        Example("openenv push my_env --dry-run", "what would change; nothing is sent", HUB),
        Example(
            "openenv push my_env --repo-id YOUR_NAME/my_env --version 0.1.0",
            "publish and tag a version",
            HUB,
        ),
        Example(
            "openenv push my_env -r YOUR_NAME/my_env --private -e LOG_LEVEL=debug --secret API_KEY",
            "private, a variable, and a secret read from $API_KEY",
            HUB,
        ),
        Example(
            "openenv push my_env --wait", "wait until the Space runs", "a Hub that runs Spaces"
        ),
        Example(
            "openenv push my_env --dataset --repo-id YOUR_NAME/my_env_tasks",
            "a dataset that declares the environment (environment.yaml), for openenv eval",
            HUB,
        ),
    ],
    "fork": [
        Example(
            "openenv fork YOUR_NAME/my_env --repo-id YOUR_NAME/my_env_mine --private",
            "a private copy to change",
            HUB,
        ),
    ],
    "pull": [
        Example("openenv pull YOUR_NAME/my_env my_copy", "a folder to edit and push back", HUB),
        Example("openenv pull YOUR_NAME/my_env old_copy --revision 0.1.0", "an older version", HUB),
    ],
    "install": [
        Example(
            "openenv install YOUR_NAME/my_env@0.1.0 --yes",
            "pip-install a version of it into this Python",
            "consent to install into this Python (tests/hub/test_install.py uses a fresh venv)",
        ),
    ],
    "versions": [
        Example("openenv versions YOUR_NAME/my_env", "its versions and install lines", HUB),
    ],
    "whoami": [
        Example("openenv whoami", "who your token is", HUB),
        Example("openenv whoami my_env", "and where a push of my_env goes", HUB),
    ],
    "record": [
        Example(
            "openenv record my_env -n 10 --policy my_policy:act -o runs.jsonl",
            "10 episodes played by act() of my_policy.py, with a summary",
        ),
        Example(
            "openenv record http://127.0.0.1:8000 -n 5 --policy my_policy:act "
            "--push-to-hub YOUR_NAME/my_runs",
            "from a running server, uploaded to a dataset",
            "a running server and your policy module",
        ),
    ],
    "ps": [
        Example("openenv ps", "servers started by openenv-hub", _DOCKER),
        Example("openenv ps --json --ray auto", "as JSON, with Ray replicas", _DOCKER),
    ],
    "stop": [
        Example("openenv stop openenv-my_env-1a2b", "one server, by the name ps shows", _DOCKER),
        Example("openenv stop --all", "everything ps lists", _DOCKER),
    ],
    "deploy kubernetes": [
        Example(
            "openenv deploy kubernetes my_env --image registry.example/my_env:0.1.0 "
            "--replicas 2 -o k8s",
            "write the manifests into k8s/",
        ),
        Example(
            "openenv deploy kubernetes my_env --image registry.example/my_env:0.1.0 --apply",
            "apply them and wait for the pods",
            "a Kubernetes cluster",
        ),
    ],
    "cache list": [Example("openenv cache list", "the environments uv made")],
    "cache prune": [
        Example("openenv cache prune --dry-run", "what pruning would remove"),
        Example("openenv cache prune --older-than 7", "remove those unused for a week"),
    ],
    "import harbor": [
        Example(
            "openenv import harbor tasks/ -o harbor_env",
            "a folder of Harbor task folders as an environment in ./harbor_env",
            "Harbor task folders",
        ),
        Example(
            "openenv import harbor hf://datasets/my-org/my-tasks -o harbor_env --build --yes",
            "a Harbor dataset on the Hub, its task images built now",
            "a Harbor dataset on the Hub and a Docker engine",
        ),
    ],
    "export harbor": [
        Example(
            "openenv export harbor harbor_env -o harbor_tasks",
            "an imported Harbor task set's folders back, unchanged",
            "an environment imported from Harbor",
        ),
        Example(
            "openenv export harbor my_env -o harbor_tasks --limit 10",
            "the first 10 tasks of my_env's taskset as Harbor task folders",
            "an environment with a taskset",
        ),
    ],
    "import verifiers": [
        Example(
            "openenv import verifiers my_vf_env.py -o vf_env",
            "a verifiers environment (its load_environment()) as an environment in ./vf_env",
            "a verifiers environment",
        ),
        Example(
            "openenv import verifiers my_vf_env --args '{\"max_turns\": 4}' -o vf_env",
            "an installed module, with load_environment's arguments",
            "an installed verifiers environment",
        ),
    ],
    "eval run": [
        Example(
            "openenv eval http://127.0.0.1:8000 --model my-model "
            "--base-url http://127.0.0.1:8001/v1 -k 4 -c 4 -o results",
            "4 rollouts of each task by a served model; key from $OPENAI_API_KEY",
            "an environment server and a model server",
        ),
        Example(
            "openenv eval my_env --policy my_policy:act --tasks tasks/ -o results --resume",
            "a Python policy on the tasks in tasks/*.jsonl; play what is missing or failed",
            "a policy module",
        ),
        Example(
            "openenv eval hf://datasets/YOUR_NAME/my_env_tasks --policy my_policy:act --yes",
            "the environment a dataset declares, on its tasks (its code runs here)",
            "a policy module and a dataset that declares an environment",
        ),
    ],
    "eval push": [
        Example(
            "openenv eval push results -r my-org/my-model-on-my-env",
            "publish a results folder as a dataset (refused if rollouts failed)",
            "a results folder",
        ),
    ],
    "eval compare": [
        Example(
            "openenv eval compare results-a results-b",
            "per-task differences, pass@k with 95% intervals, a paired test",
            "two results folders",
        ),
    ],
    "tasks": [
        Example(
            "openenv tasks http://127.0.0.1:8000 --split test",
            "the tasks an evaluation plays",
            "a running server",
        ),
    ],
    "rescore": [
        Example(
            "openenv rescore results --env http://127.0.0.1:8000",
            "replay saved rollouts, report changed rewards",
            "saved results and a server",
        ),
    ],
    "help": [
        Example("openenv help", "the commands"),
        Example("openenv help push", "the help of one command (as openenv push --help)"),
    ],
}

#: A group's help (and the root's) shows some of its commands' examples: each one is also a
#: command's, so it is run (or skipped) where that command's are.
EXAMPLES |= {
    "": [
        EXAMPLES["init"][0],
        EXAMPLES["validate"][1],
        EXAMPLES["serve"][1],
        EXAMPLES["push"][1],
        EXAMPLES["help"][1],
    ],
    "deploy": EXAMPLES["deploy kubernetes"],
    "cache": [*EXAMPLES["cache list"], *EXAMPLES["cache prune"]],
    "import": [EXAMPLES["import harbor"][0], EXAMPLES["import verifiers"][0]],
    "export": EXAMPLES["export harbor"],
    "eval": [EXAMPLES["eval run"][1], EXAMPLES["eval push"][0], EXAMPLES["eval compare"][0]],
}
