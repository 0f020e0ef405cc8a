"""What an exporter is given: the selected runs' manifests, and the objects they refer to
by reference field and digest (``kidx.operations.export.exporting.selected_runs`` reads
both from the store in one read)."""

from __future__ import annotations

#: a run's reference fields, each with the kind it refers to
ROLES = (("protocolDigest", "BenchmarkProtocol"), ("workloadDigest", "Workload"),
         ("environmentDigest", "ExecutionEnvironment"), ("implementationDigest", "Implementation"))

#: reference field -> digest -> the manifest of the object the runs refer to
RunObjects = dict[str, dict[str, dict]]
