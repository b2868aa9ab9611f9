"""smolagents' ``LocalPythonExecutor`` (the peer's mechanism), measured in its own venv.

``python smolagents_peer.py escape CONFIG`` runs the coding environment's escape attempts against
it, each in a child process so that an attempt that succeeds harms only that child, with a
watchdog; ``python smolagents_peer.py speed`` times trivial steps and executor start. Prints
JSON. The attempts are the suite's (envs/coding_env/tests/test_escape.py), made harmless where
they would otherwise hurt this shared machine: forks stop at 200, allocations at 1 GB (twice the
suite's limit), and every child runs under a watchdog and, as a safety net, a 4 GB address-space
limit; an attempt stopped by that net counts as not contained.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import secrets
import socket
import sys
import tempfile
import threading
import time

LIMIT_MB = 512
WATCHDOG_S = 30.0
# The imports each attempt needs. "default" authorizes none beyond smolagents' base list;
# "needed" authorizes them, as an environment that lets agents use the standard library would.
IMPORTS = ["os", "subprocess", "socket", "ctypes", "threading", "time", "sys", "glob", "signal"]


def _executor(config: str):  # type: ignore[no-untyped-def]
    from smolagents.local_python_executor import LocalPythonExecutor

    extra = IMPORTS if config == "needed" else []
    executor = LocalPythonExecutor(additional_authorized_imports=extra)
    executor.send_tools({})
    return executor


def _attempts(context: dict[str, str]) -> dict[str, str]:
    return {
        "fork bomb": "import os\nn = 0\nfor _ in range(200):\n    if os.fork() == 0:\n        os._exit(0)\n    n += 1\nn",
        "memory bomb": "len(bytearray(1024 * 1024 * 1024))",
        "infinite loop": "while True:\n    pass",
        "busy threads": "import threading, time\ndef spin():\n    while True:\n        pass\nfor _ in range(8):\n    threading.Thread(target=spin, daemon=True).start()\ntime.sleep(3600)",
        "1 GB of output": "chunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    print(chunk)",
        "write outside the working directory": f"f = open({context['outside']!r}, 'w')\nf.write('x')\nf.close()",
        "read a secret file": f"open({context['secret_path']!r}).read()",
        "read the server's environment": "import os\nstr(dict(os.environ))",
        "connect to 127.0.0.1": f"import socket\ns = socket.create_connection(('127.0.0.1', {context['port']}), timeout=5)\ns.sendall(b'escaped')",
        "kill or signal the parent": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
        "subprocess / os.system": "import subprocess\nsubprocess.run(['sh', '-c', 'ulimit -v unlimited && echo raised'], capture_output=True, text=True).stdout",
        "ctypes": "import ctypes\nctypes.string_at(0)",
        "another session's files": f"open({context['other_file']!r}).read()",
    }


def _run_one(config: str, code: str, queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # the safety net
    try:
        executor = _executor(config)
        result = executor(code)
        text = f"{getattr(result, 'output', '')!s}{getattr(result, 'logs', '')!s}"
        queue.put(("returned", text[-100_000:]))
    except MemoryError:
        queue.put(("safety net", "MemoryError"))
    except BaseException as exc:
        queue.put(("refused", f"{type(exc).__name__}: {str(exc)[:300]}"))


def _verdict(
    name: str, outcome: str, text: str, context: dict[str, str], extra: dict[str, bool]
) -> bool:
    """True when the executor itself contained the attempt."""
    if outcome in ("died", "watchdog", "safety net"):
        return False
    if name == "fork bomb":
        return outcome == "refused"
    if name == "memory bomb":
        return outcome == "refused"
    if name == "1 GB of output":
        return outcome == "refused" or len(text) <= 65536 * 2
    if name == "write outside the working directory":
        return not os.path.exists(context["outside"])
    if name in ("read a secret file", "read the server's environment"):
        return context["secret"] not in text
    if name == "connect to 127.0.0.1":
        return not extra["connected"]
    if name == "subprocess / os.system":
        return "raised" not in text
    if name == "another session's files":
        return context["other_secret"] not in text
    return outcome == "refused" or outcome == "returned"


def escape(config: str) -> dict[str, bool]:
    folder = tempfile.mkdtemp(prefix="smolagents-escape-")
    secret = secrets.token_hex(8)
    context = {
        "outside": os.path.join(folder, "escaped"),
        "secret_path": os.path.join(folder, "secret.txt"),
        "secret": secret,
        "other_file": os.path.join(folder, "other-session.txt"),
        "other_secret": secrets.token_hex(8),
    }
    with open(context["secret_path"], "w") as f:
        f.write(secret)
    with open(context["other_file"], "w") as f:
        f.write(context["other_secret"])
    os.environ["CODING_ENV_TEST_SERVER_SECRET"] = secret
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    context["port"] = str(listener.getsockname()[1])
    extra = {"connected": False}
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                listener.accept()
                extra["connected"] = True
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    verdicts = {}
    for name, code in _attempts(context).items():
        queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
        child = multiprocessing.Process(target=_run_one, args=(config, code, queue))
        child.start()
        child.join(WATCHDOG_S)
        outcome, text = "died", ""
        if child.is_alive():
            outcome = "watchdog"
            child.kill()
            child.join()
        elif not queue.empty():
            outcome, text = queue.get()
        verdicts[name] = _verdict(name, outcome, text, context, extra)
    stop.set()
    return verdicts


def speed() -> dict[str, float]:
    started = time.perf_counter()
    executors = [_executor("needed") for _ in range(16)]
    start_s = (time.perf_counter() - started) / 16
    one = executors[0]
    n = 2000
    started = time.perf_counter()
    for _ in range(n):
        one("x = 1")
    sequential = n / (time.perf_counter() - started)

    def loop(executor) -> None:  # type: ignore[no-untyped-def]
        for _ in range(n // 16):
            executor("x = 1")

    threads = [threading.Thread(target=loop, args=(e,)) for e in executors]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    parallel = (n // 16) * 16 / (time.perf_counter() - started)
    return {
        "start_s": start_s,
        "sequential_steps_per_s": sequential,
        "sessions16_steps_per_s": parallel,
    }


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    if sys.argv[1] == "escape":
        print(json.dumps(escape(sys.argv[2])))
    else:
        print(json.dumps(speed()))
