"""Cases of kubernetes/kubectl ``pkg/cmd/get/sorter_test.go`` (Apache-2.0), as data.

Objects are the test's objects as JSON (only the fields the sort reads, and a name to
recognise them by). Each case: (name, field, objects, expected order of names, or an
error text).
"""


def _named(name, **fields):
    return {"metadata": {"name": name}, **fields}


def _pod_requests(name, cpu=None, memory=None):
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return _named(name, spec={"containers": [{"resources": {"requests": requests, "limits": {}}}]})


def _created(name, seconds):
    return {"metadata": {"name": name, "creationTimestamp": f"1970-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"}}


CASES = [
    ("empty", "{.metadata.name}", [], []),
    ("in-order-already", "{.metadata.name}", [_named("a"), _named("b"), _named("c")], ["a", "b", "c"]),
    ("reverse-order", "{.metadata.name}", [_named("b"), _named("c"), _named("a")], ["a", "b", "c"]),
    ("random-order-timestamp", "{.metadata.creationTimestamp}",
     [_created("t300", 300), _created("t100", 100), _created("t200", 200)], ["t100", "t200", "t300"]),
    ("random-order-numbers", "{.spec.replicas}",
     [_named("r5", spec={"replicas": 5}), _named("r1", spec={"replicas": 1}), _named("r9", spec={"replicas": 9})],
     ["r1", "r5", "r9"]),
    ("v1.List in order", "{.metadata.name}", [_named("a"), _named("b"), _named("c")], ["a", "b", "c"]),
    ("v1.List in reverse", "{.metadata.name}", [_named("c"), _named("b"), _named("a")], ["a", "b", "c"]),
    ("some-missing-fields", "{.status.availableReplicas}",
     [_named("two", status={"availableReplicas": 2}), _named("none", status={}),
      _named("one", status={"availableReplicas": 1})], ["none", "one", "two"]),
    ("all-missing-fields", "{.status.availableReplicas}",
     [_named("a", status={"replicas": 0}), _named("b", status={"replicas": 0})],
     'couldn\'t find any field with path "{.status.availableReplicas}" in the list of objects'),
    ("model-invalid-fields", "{.invalid}", [_named("a", status={}), _named("b", status={}), _named("c", status={})],
     'couldn\'t find any field with path "{.invalid}" in the list of objects'),
    ("empty fields", "{.lastTimestamp}",
     [{"metadata": {"name": "late", "creationTimestamp": "1970-01-01T00:05:00Z"}, "lastTimestamp": "1970-01-01T00:05:00Z"},
      {"metadata": {"name": "early", "creationTimestamp": "1970-01-01T00:03:20Z"}, "lastTimestamp": None}],
     ["early", "late"]),
    ("pod-resources-cpu-random-order-with-missing-fields", "{.spec.containers[].resources.requests.cpu}",
     [_pod_requests("0.5", cpu="0.5"), _pod_requests("10", cpu="10"), _pod_requests("100m", cpu="100m"),
      _pod_requests("none")], ["none", "100m", "0.5", "10"]),
    ("pod-resources-memory-random-order-with-missing-fields", "{.spec.containers[].resources.requests.memory}",
     [_pod_requests(m, memory=m) for m in ("128Mi", "10Ei", "8Ti", "64Gi", "55Pi", "2Ki")] + [_pod_requests("none")],
     ["none", "2Ki", "128Mi", "64Gi", "8Ti", "55Pi", "10Ei"]),
]

# TestRuntimeSortLess: three pods b, c, a; (field, i, j, i sorts before j)
LESS_PODS = [_named("b", spec={"containers": [{"resources": {"requests": {"cpu": "0.5", "memory": "1Gi"}}}]}),
             _named("c", spec={"containers": [{"resources": {"requests": {"cpu": "2", "memory": "1Ti"}}}]}),
             _named("a", spec={"containers": [{"resources": {"requests": {"cpu": "10m", "memory": "1Ki"}}}]})]
LESS = [
    ("{.metadata.name}", 0, 1, True),
    ("{.metadata.name}", 1, 2, False),
    ("{.metadata.name}", 0, 2, False),
    ("{.spec.containers[].resources.requests.cpu}", 0, 1, True),
    ("{.spec.containers[].resources.requests.cpu}", 1, 2, False),
    ("{.spec.containers[].resources.requests.cpu}", 0, 2, False),
    ("{.spec.containers[].resources.requests.memory}", 0, 1, True),
    ("{.spec.containers[].resources.requests.memory}", 1, 2, False),
    ("{.spec.containers[].resources.requests.memory}", 0, 2, False),
]

_QUANTITIES = ("strings sort in natural order (digit runs as numbers); kubectl compares two strings that "
               "parse as Kubernetes quantities (100m, 1Gi) as quantities. A benchmark index holds "
               "version-like strings (2.9 < 2.10) far more often than quantities")

# name -> (kidx's order, reason); LESS cases: (field, i, j) -> (kidx's answer, reason)
DIVERGENCES = {
    "pod-resources-cpu-random-order-with-missing-fields": (["none", "0.5", "10", "100m"], _QUANTITIES),
    "pod-resources-memory-random-order-with-missing-fields":
        (["none", "2Ki", "8Ti", "10Ei", "55Pi", "64Gi", "128Mi"], _QUANTITIES),
}
LESS_DIVERGENCES = {
    ("{.spec.containers[].resources.requests.cpu}", 1, 2): (True, _QUANTITIES),
    ("{.spec.containers[].resources.requests.cpu}", 0, 2): (True, _QUANTITIES),
    ("{.spec.containers[].resources.requests.memory}", 0, 2): (True, _QUANTITIES),
}
