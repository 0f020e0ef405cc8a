"""The public Python API as a contract: its names and signatures pinned, strictly typed,
documented by a generated page that is kept in sync, and cheap to import."""

from __future__ import annotations

import subprocess
import sys

import api_reference as reference
from conftest import REPO

import kidx

PUBLIC_MODULES = ["kidx/__init__.py", "kidx/errors.py", "kidx/api"]

# A change here changes the public API: make it deliberately, with docs/api.md regenerated.
PINNED = {
    'ApplyOutcome': 'class ApplyOutcome',
    'ApplyOutcome.__init__': 'ApplyOutcome(kind: str, name: str, action: str, digest: str) -> None',
    'ApplyResult': 'class ApplyResult',
    'ApplyResult.__init__': 'ApplyResult(outcomes: list[ApplyOutcome], warnings: list[str], dry_run: bool) -> None',
    'ApplyResult.count': 'ApplyResult.count(action: str) -> int',
    'Comparison': 'class Comparison',
    'Comparison.to_dict': 'Comparison.to_dict() -> dict[str, Any]',
    'Environment': 'class Environment',
    'Implementation': 'class Implementation',
    'ImportResult': 'class ImportResult',
    'ImportResult.__init__': 'ImportResult(outcomes: list[ApplyOutcome], warnings: list[str], dry_run: bool, summary: str, skipped: list[str]) -> None',
    'Protocol': 'class Protocol',
    'Recording': 'class Recording',
    'Recording.__init__': 'Recording(run: dict[str, Any], protocol: dict[str, Any], workload: dict[str, Any], environment: dict[str, Any], implementation: dict[str, Any]) -> None',
    'Recording.manifests': 'Recording.manifests: list[dict[str, Any]]',
    'Recording.name': 'Recording.name: str',
    'Run': 'class Run',
    'Run.protocol': 'Run.protocol: Protocol | None',
    'Run.workload': 'Run.workload: Workload | None',
    'Run.environment': 'Run.environment: Environment | None',
    'Run.implementation': 'Run.implementation: Implementation | None',
    'SeriesResult': 'class SeriesResult',
    'SeriesResult.to_dict': 'SeriesResult.to_dict() -> dict[str, Any]',
    'Store': 'class Store',
    'Store.__init__': 'Store(store: backend.Store, location: str | os.PathLike[str] | None = None) -> None',
    'Store.location': 'Store.location: str',
    'Store.close': 'Store.close() -> None',
    'Store.get': 'Store.get(kind: str, *names: str, selector: str | None = None, field_selector: str | None = None, references: Iterable[str] = ()) -> list[StoredObject]',
    'Store.records': 'Store.records(selector: str | None = None, field_selector: str | None = None, columns: Sequence[str] | None = None, references: Iterable[str] = ()) -> list[dict[str, Any]]',
    'Store.frame': 'Store.frame(selector: str | None = None, field_selector: str | None = None, columns: Sequence[str] | None = None, references: Iterable[str] = ()) -> Any',
    'Store.compare': "Store.compare(*names: str, selector: str | None = None, field_selector: str | None = None, references: Iterable[str] = (), by: str = 'implementation', baseline: str | None = None, threshold: float | None = None, only: str | Iterable[str] | None = None, force: bool = False, alpha: float = 0.05, aggregate: str | None = None, metric: str | None = None) -> Comparison",
    'Store.series': 'Store.series(*names: str, selector: str | None = None, field_selector: str | None = None, references: Iterable[str] = (), label: str | None = None, baseline: str | None = None, threshold: float | None = None, alpha: float = 0.05, tail: int | None = None) -> SeriesResult',
    'Store.apply': 'Store.apply(documents_or_path: Documents, dry_run: bool = False) -> ApplyResult',
    'Store.import_bundle': 'Store.import_bundle(path: str | os.PathLike[str], dry_run: bool = False) -> ImportResult',
    'Store.import_files': 'Store.import_files(format_name: str, files: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], *, environment: str | os.PathLike[str] | None = None, library: str | None = None, op: str | None = None, mode: str | None = None, level: int | None = None, dry_run: bool = False) -> ImportResult',
    'StoredObject': 'class StoredObject',
    'StoredObject.kind': 'StoredObject.kind: str',
    'StoredObject.__init__': 'StoredObject(manifest: dict[str, Any], resolve: Resolver | None = None) -> None',
    'StoredObject.name': 'StoredObject.name: str',
    'StoredObject.digest': 'StoredObject.digest: str',
    'StoredObject.api_version': 'StoredObject.api_version: str',
    'StoredObject.title': 'StoredObject.title: str | None',
    'StoredObject.labels': 'StoredObject.labels: Mapping[str, str]',
    'StoredObject.annotations': 'StoredObject.annotations: Mapping[str, str]',
    'StoredObject.spec': 'StoredObject.spec: Mapping[str, Any]',
    'StoredObject.manifest': 'StoredObject.manifest: dict[str, Any]',
    'Timings': 'class Timings',
    'Timings.__init__': "Timings(statistics: Mapping[str, float], quantiles: Mapping[str, float] | None = None, samples: Sequence[float] | None = None, protocol: Mapping[str, Any] | None = None, native: Mapping[str, Any] | None = None, source: str = 'kidx.record_run') -> None",
    'Timings.from_samples': "Timings.from_samples(samples: Iterable[float], unit: str = 'ms', protocol: Mapping[str, Any] | None = None) -> Timings",
    'Timings.from_do_bench': "Timings.from_do_bench(result: float | Sequence[float], quantiles: Sequence[float] = (0.5, 0.2, 0.8), return_mode: str = 'mean', unit: str = 'ms') -> Timings",
    'Timings.from_measurement': 'Timings.from_measurement(measurement: Any) -> Timings',
    'Workload': 'class Workload',
    'capture_environment': 'capture_environment(name: str | None = None) -> dict[str, Any]',
    'measure': "measure(fn: Callable[[], Any], *, timer: str = 'cuda_graph', cache: str = 'cold', warmup_ms: float = 25.0, rep_ms: float = 100.0, grad_to_none: Sequence[Any] | None = None, max_noise: float | None = None, max_time_ms: float = 1000.0, min_time_ms: float = 0.0) -> Timings",
    'open_store': 'open_store(location: str | os.PathLike[str] | None = None) -> Store',
    'record_run': 'record_run(*, implementation: Any, workload: Any, environment: Any, timings: Timings | Any, protocol: Any = None, labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None, observed_at: datetime.datetime | str | None = None, benchmark: str | None = None, name: str | None = None, title: str | None = None) -> Recording',
}


def test_public_names_and_signatures_are_pinned():
    assert kidx.__all__ == sorted(kidx.__all__)
    assert set(kidx.__all__) == {name.split(".")[0] for name in PINNED} | {"__version__"}
    assert reference.public_signatures() == PINNED


def test_every_public_name_resolves_and_unknown_ones_do_not():
    for name in kidx.__all__:
        assert getattr(kidx, name) is not None
    assert "open_store" in dir(kidx)
    try:
        kidx.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert str(exc) == "module 'kidx' has no attribute 'no_such_name'"
    else:
        raise AssertionError("an unknown name resolved")


def test_error_classes_are_documented_under_kidx_errors():
    import kidx.errors as errors

    for name in ("KidxError", "UsageError", "NotFoundError", "InvalidInputError", "StoreError", "StoreBusy",
                 "StoreReadOnly", "MissingDependencyError"):
        cls = getattr(errors, name)
        assert issubclass(cls, errors.KidxError) and not issubclass(cls, SystemExit) and cls.__doc__
        assert f"``{name}``" in errors.__doc__ or name in ("StoreBusy", "StoreReadOnly")


def test_the_package_ships_type_information():
    assert (REPO / "kidx" / "py.typed").is_file()


def test_public_modules_pass_mypy_strict():
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", *PUBLIC_MODULES],
        cwd=REPO, capture_output=True, text=True,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.startswith("Success: no issues found")


def test_docs_api_reference_is_generated_from_the_docstrings():
    page = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    assert reference.MARKER in page
    assert page == reference.updated(page), "docs/api.md is out of date: python tests/api_reference.py --write docs/api.md"
    for name, signature in PINNED.items():
        if not name.endswith(".__init__"):
            assert f"`{signature}`" in page, name
    assert subprocess.run([sys.executable, "tests/api_reference.py", "--check", "docs/api.md"],
                          cwd=REPO).returncode == 0


def test_importing_kidx_loads_no_part_of_the_api():
    code = ("import sys, kidx; print(sorted(m for m in sys.modules if m.startswith('kidx.'))); "
            "kidx.open_store; print('kidx.api.store' in sys.modules); print(kidx.errors.KidxError.__name__)")
    completed = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert completed.stdout == "[]\nTrue\nKidxError\n"
