"""``push_dataset``: publish an environment folder as a Hub dataset that declares it, in one
commit: the folder's published files (the same selection a Space push uploads, checked the
same way), an ``environment.yaml`` at the root naming the folder as the environment
(``frameworks: {openenv: {manifest: openenv.yaml}}``) and where its task rows are, and a
dataset card tagged ``openenv`` and ``rl-environment`` (and the manifest's own tags, such as
the library an imported environment came from). Files deleted locally are deleted from the
dataset.

``from_hub("hf://datasets/NS/NAME")`` and ``openenv eval hf://datasets/NS/NAME`` then run it,
after the user's consent for the commit they resolve to.

Layer: services.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from openenv_hub.errors import VersionExistsError
from openenv_hub.hub._access import check_write_access, whoami
from openenv_hub.hub._bundle import stage_bundle
from openenv_hub.hub._card import environment_tags
from openenv_hub.hub._client import HubContext, parse_repo_id
from openenv_hub.hub._datasets import DatasetRef
from openenv_hub.hub._environment_file import (
    ENVIRONMENT_FILE,
    SPEC_VERSION,
    parse_environment_file,
)
from openenv_hub.hub._errors import hub_call
from openenv_hub.hub._ignore import Skipped
from openenv_hub.hub._push import check_version
from openenv_hub.model.manifest import Manifest

__all__ = ["DatasetPushResult", "push_dataset"]


@dataclass
class DatasetPushResult:
    """What :func:`push_dataset` published (or, for a dry run, would publish).

    Attributes:
        repo_id: The dataset.
        url: Its page.
        reference: ``hf://datasets/NS/NAME/ID`` (with ``@COMMIT`` once pushed).
        files: What was uploaded.
        skipped: What the safety rules left out, with why.
        tags: The card's tags.
        commit: The dataset's commit after the push (None for a dry run).
    """

    repo_id: str
    url: str
    reference: str
    files: list[str]
    skipped: list[Skipped] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    commit: str | None = None


def push_dataset(
    path: str | Path,
    repo_id: str | None = None,
    *,
    private: bool | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    version: str | None = None,
    force: bool = False,
    exclude: Sequence[str] = (),
    include_secrets: Sequence[str] = (),
    allow_hard_links: bool = False,
    dry_run: bool = False,
) -> DatasetPushResult:
    """Publish the environment folder ``path`` as the dataset ``repo_id`` (default
    ``<your user name>/<manifest name>``).

    Raises:
        EnvironmentValidationError: The folder failed a static check; nothing was sent.
        ConfigurationError: The folder's own ``environment.yaml`` cannot be read.
        VersionExistsError: ``version`` is tagged already and ``force`` is not set.
        HubPermissionError: The token may not write to the namespace; nothing was sent.
        HubError: Any other Hub failure.
    """
    if version is not None:
        check_version(version)
    ctx = HubContext.create(endpoint=endpoint, token=token, required=True, action="push")
    source = Path(path).resolve()
    with tempfile.TemporaryDirectory(prefix="openenv-push-dataset-") as tmp:
        bundle = stage_bundle(
            source, Path(tmp) / source.name, exclude=exclude, include_secrets=include_secrets,
            allow_hard_links=allow_hard_links, bundle_wheel=False,
        )  # fmt: skip
        user = whoami(ctx)
        rid = repo_id or f"{user['name']}/{bundle.manifest.name}"
        parse_repo_id(rid)
        check_write_access(user, rid, endpoint=ctx.endpoint)
        declared = _environment_file(bundle.root, bundle.manifest, rid)
        tags = environment_tags(bundle.manifest.tags)
        (bundle.root / "README.md").write_text(
            _card(bundle.root, bundle.manifest, declared, tags, rid), encoding="utf-8"
        )
        files = sorted({*bundle.files, "README.md", ENVIRONMENT_FILE})
        env_id = parse_environment_file(declared, where=rid).environments[0].id
        url = f"{ctx.endpoint}/datasets/{rid}"
        result = DatasetPushResult(
            rid, url, str(DatasetRef(rid, env_id)), files, bundle.skipped, tags
        )
        if dry_run:
            return result
        result.commit = _upload(ctx, bundle.root, files, rid, private, version, force)
    result.reference = str(DatasetRef(rid, env_id, result.commit))
    return result


def _environment_file(root: Path, manifest: Manifest, repo_id: str) -> str:
    """The folder's own ``environment.yaml`` (checked), else one that declares the folder."""
    own = root / ENVIRONMENT_FILE
    if own.is_file():
        text = own.read_text(encoding="utf-8")
        parse_environment_file(text, where=f"the folder {manifest.name}")
        return text
    declaration: dict[str, Any] = {"id": manifest.name}
    declaration["title"] = _title(manifest)
    if manifest.description:
        declaration["description"] = manifest.description
    rows = _rows_folder(root, manifest)
    if rows is not None:
        splits = sorted({p.stem.split("-")[0] for p in (root / rows).rglob("*.jsonl")})
        declaration.update(config_name="default", splits=splits, dataset={"path": rows})
    declaration["frameworks"] = {"openenv": {"manifest": "openenv.yaml"}}
    text = yaml.safe_dump(
        {"spec_version": SPEC_VERSION, "environments": [declaration]},
        sort_keys=False,
        allow_unicode=True,
    )
    parse_environment_file(text, where=repo_id)  # what is written is what is read
    own.write_text(text, encoding="utf-8")
    return text


def _rows_folder(root: Path, manifest: Manifest) -> str | None:
    """The folder of the manifest's taskset of JSON Lines files in the folder, if it has one."""
    taskset = manifest.taskset
    source = taskset.source if taskset is not None else None
    if not source or "://" in source:
        return None
    folder = (root / source).resolve()
    if not folder.is_relative_to(root.resolve()) or not any(folder.rglob("*.jsonl")):
        return None
    return folder.relative_to(root.resolve()).as_posix() or None


def _title(manifest: Manifest) -> str:
    return " ".join(part.capitalize() for part in manifest.name.split("_") if part)


def _card(root: Path, manifest: Manifest, declared: str, tags: list[str], repo_id: str) -> str:
    """The dataset card: the folder's README below a dataset front matter."""
    body = _body((root / "README.md").read_text(encoding="utf-8"))
    front: dict[str, Any] = {"pretty_name": _title(manifest), "tags": tags}
    environment = parse_environment_file(declared, where=repo_id).environments[0]
    location = environment.dataset.path if environment.dataset else None
    if location and environment.splits:
        files = [{"split": s, "path": f"{location}/{s}*.jsonl"} for s in environment.splits]
        front["configs"] = [{"config_name": "default", "data_files": files}]
    use = (
        f"\n## Use\n\nThis dataset is an environment (`{ENVIRONMENT_FILE}`): "
        f"`openenv eval hf://datasets/{repo_id} --policy ...`, or in Python "
        f'`GenericEnvClient.from_hub("hf://datasets/{repo_id}", trust_remote_code=True)`. '
        "Both run its code on your machine after asking.\n"
    )
    return f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n{body.rstrip()}\n{use}"


def _body(readme: str) -> str:
    """A README without its front matter."""
    if readme.startswith("---"):
        parts = readme.split("\n---", 2)
        if len(parts) >= 2:
            return parts[-1].lstrip("-").lstrip("\n")
    return readme


def _upload(
    ctx: HubContext,
    root: Path,
    files: list[str],
    repo_id: str,
    private: bool | None,
    version: str | None,
    force: bool,
) -> str:
    """One commit: every file of ``files``, and the deletion of every other file the dataset
    holds; then the version tag. Returns the commit."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    api = ctx.api
    with hub_call(ctx, "push the dataset", repo_id=repo_id, repo_type="dataset"):
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        tags = {t.name for t in api.list_repo_refs(repo_id, repo_type="dataset").tags}
    if version is not None and version in tags and not force:
        raise VersionExistsError(repo_id, version)
    with hub_call(ctx, "push the dataset", repo_id=repo_id, repo_type="dataset"):
        present = set(api.list_repo_files(repo_id, repo_type="dataset"))
        operations: list[Any] = [CommitOperationAdd(name, str(root / name)) for name in files]
        operations += [
            CommitOperationDelete(name)
            for name in sorted(present - set(files) - {".gitattributes"})
        ]
        info = api.create_commit(
            repo_id, operations, commit_message="Publish the environment", repo_type="dataset"
        )
        commit = str(info.oid)
        if version is not None:
            if version in tags:
                api.delete_tag(repo_id, tag=version, repo_type="dataset")
            api.create_tag(repo_id, tag=version, revision=commit, repo_type="dataset")
    return commit
