"""Cases of kubernetes/client-go ``util/jsonpath/jsonpath_test.go`` (Apache-2.0), as data.

Each case: (name, template, input, expected output, expect an error, allow missing keys).
Inputs are the test's data written as JSON (Go structs become objects with the same
field names). ``DIVERGENCES`` holds the cases where kidx deliberately answers
differently, with kidx's answer and the reason (see docs/scripting.md).
"""

TYPES = {
    "bools": [True, False, True, False],
    "integers": [1, 2, 3, 4],
    "floats": [1.0, 2.2, 3.3, 4.0],
    "strings": ["one", "two", "three", "four"],
    "interfaces": [True, "one", 1, 1.1],
    "maps": [
        {"name": "one", "value": 1},
        {"name": "two", "value": 2.02},
        {"name": "three", "value": 3.03},
        {"name": "four", "value": 4.04},
    ],
    "structs": [
        {"name": "one", "value": 1, "type": "integer"},
        {"name": "two", "value": 2.002, "type": "float"},
        {"name": "three", "value": 3, "type": "integer"},
        {"name": "four", "value": 4.004, "type": "float"},
    ],
}

STORE = {
    "Book": [
        {"Category": "reference", "Author": "Nigel Rees", "Title": "Sayings of the Centurey", "Price": 8.95},
        {"Category": "fiction", "Author": "Evelyn Waugh", "Title": "Sword of Honour", "Price": 12.99},
        {"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99},
    ],
    "Bicycle": [
        {"Color": "red", "Price": 19.95, "IsNew": True},
        {"Color": "green", "Price": 20.01, "IsNew": False},
    ],
    "Name": "jsonpath",
    "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
    "Employees": {"jason": "manager", "dan": "clerk"},
}

POINTS = [
    {"id": "i1", "x": 4, "y": -5},
    {"id": "i2", "x": -2, "y": -5, "z": 1},
    {"id": "i3", "x": 8, "y": 3},
    {"id": "i4", "x": -6, "y": -1},
    {"id": "i5", "x": 0, "y": 2, "z": 1},
    {"id": "i6", "x": 1, "y": 4},
    {"id": "i7", "x": None, "y": 4},
]

NODES = {
    "kind": "List",
    "items": [
        {"kind": "None", "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
         "status": {"capacity": {"cpu": "4"}, "ready": True,
                    "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]}},
        {"kind": "None", "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
         "status": {"capacity": {"cpu": "8"}, "ready": False,
                    "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.2"},
                                  {"type": "another", "address": "127.0.0.3"}]}},
    ],
    "users": [
        {"name": "myself", "user": {}},
        {"name": "e2e", "user": {"username": "admin", "password": "secret"}},
    ],
}

EMPTY_LIST = {"items": []}

PODS = {"items": [
    {"metadata": {"name": "pod1"}, "spec": {"containers": [
        {"name": "foo", "another": [{"name": "value1"}, {"name": "value2"}]},
        {"name": "bar", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
    {"metadata": {"name": "pod2"}, "spec": {"containers": [
        {"name": "baz", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
]}

ANNOTATED = {"kind": "List", "items": [
    {"kind": "Pod", "metadata": {"name": "pod1", "annotations": {"color": "blue"}}},
    {"kind": "Pod", "metadata": {"name": "pod2"}},
    {"kind": "Pod", "metadata": {"name": "pod3", "annotations": {"color": "green"}}},
    {"kind": "Pod", "metadata": {"name": "pod4", "annotations": {"color": "blue"}}},
]}


def _containers(count):
    return {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"image": "radial/busyboxplus:curl", "name": f"fake{i}"} for i in range(count)]}}


FOUR_CONTAINERS = _containers(4)
SIX_CONTAINERS = _containers(6)

RUNNING = {"kind": "List", "items": [
    {"kind": "Pod", "metadata": {"name": "pod1"}, "status": {"phase": "Running"}},
    {"kind": "Pod", "metadata": {"name": "pod2"}, "status": {"phase": "Running"}},
    {"kind": "Pod", "metadata": {"name": "pod3"}, "status": {"phase": "Running"}},
    {"resourceVersion": ""},
]}

# (name, template, input, expected, expect_error, allow_missing_keys)
CASES = [
    # TestTypesInput
    ("boolSlice", "{ .bools }", TYPES, "[true,false,true,false]", False, False),
    ("boolSliceIndex", "{ .bools[0] }", TYPES, "true", False, False),
    ("boolSliceIndexNegative", "{ .bools[-1] }", TYPES, "false", False, False),
    ("boolSubSlice", "{ .bools[0:2] }", TYPES, "true false", False, False),
    ("boolSubSliceFirst2", "{ .bools[:2] }", TYPES, "true false", False, False),
    ("boolSubSliceStep2", "{ .bools[:4:2] }", TYPES, "true true", False, False),
    ("integerSlice", "{ .integers }", TYPES, "[1,2,3,4]", False, False),
    ("integerSliceIndex", "{ .integers[0] }", TYPES, "1", False, False),
    ("integerSliceIndexReverse", "{ .integers[-2] }", TYPES, "3", False, False),
    ("integerSubSliceFirst2", "{ .integers[0:2] }", TYPES, "1 2", False, False),
    ("integerSubSliceFirst2Alt", "{ .integers[:2] }", TYPES, "1 2", False, False),
    ("integerSubSliceStep2", "{ .integers[:4:2] }", TYPES, "1 3", False, False),
    ("floatSlice", "{ .floats }", TYPES, "[1,2.2,3.3,4]", False, False),
    ("floatSliceIndex", "{ .floats[0] }", TYPES, "1", False, False),
    ("floatSliceIndexReverse", "{ .floats[-2] }", TYPES, "3.3", False, False),
    ("floatSubSliceFirst2", "{ .floats[0:2] }", TYPES, "1 2.2", False, False),
    ("floatSubSliceFirst2Alt", "{ .floats[:2] }", TYPES, "1 2.2", False, False),
    ("floatSubSliceStep2", "{ .floats[:4:2] }", TYPES, "1 3.3", False, False),
    ("stringSlice", "{ .strings }", TYPES, '["one","two","three","four"]', False, False),
    ("stringSliceIndex", "{ .strings[0] }", TYPES, "one", False, False),
    ("stringSliceIndexReverse", "{ .strings[-2] }", TYPES, "three", False, False),
    ("stringSubSliceFirst2", "{ .strings[0:2] }", TYPES, "one two", False, False),
    ("stringSubSliceFirst2Alt", "{ .strings[:2] }", TYPES, "one two", False, False),
    ("stringSubSliceStep2", "{ .strings[:4:2] }", TYPES, "one three", False, False),
    ("interfaceSlice", "{ .interfaces }", TYPES, '[true,"one",1,1.1]', False, False),
    ("interfaceSliceIndex", "{ .interfaces[0] }", TYPES, "true", False, False),
    ("interfaceSliceIndexReverse", "{ .interfaces[-2] }", TYPES, "1", False, False),
    ("interfaceSubSliceFirst2", "{ .interfaces[0:2] }", TYPES, "true one", False, False),
    ("interfaceSubSliceFirst2Alt", "{ .interfaces[:2] }", TYPES, "true one", False, False),
    ("interfaceSubSliceStep2", "{ .interfaces[:4:2] }", TYPES, "true 1", False, False),
    ("mapSlice", "{ .maps }", TYPES,
     '[{"name":"one","value":1},{"name":"two","value":2.02},{"name":"three","value":3.03},'
     '{"name":"four","value":4.04}]', False, False),
    ("mapSliceIndex", "{ .maps[0] }", TYPES, '{"name":"one","value":1}', False, False),
    ("mapSliceIndexReverse", "{ .maps[-2] }", TYPES, '{"name":"three","value":3.03}', False, False),
    ("mapSubSliceFirst2", "{ .maps[0:2] }", TYPES, '{"name":"one","value":1} {"name":"two","value":2.02}', False, False),
    ("mapSubSliceFirst2Alt", "{ .maps[:2] }", TYPES, '{"name":"one","value":1} {"name":"two","value":2.02}', False, False),
    ("mapSubSliceStepOdd", "{ .maps[::2] }", TYPES, '{"name":"one","value":1} {"name":"three","value":3.03}', False, False),
    ("mapSubSliceStepEven", "{ .maps[1::2] }", TYPES, '{"name":"two","value":2.02} {"name":"four","value":4.04}', False, False),
    ("structSlice", "{ .structs }", TYPES,
     '[{"name":"one","value":1,"type":"integer"},{"name":"two","value":2.002,"type":"float"},'
     '{"name":"three","value":3,"type":"integer"},{"name":"four","value":4.004,"type":"float"}]', False, False),
    ("structSliceIndex", "{ .structs[0] }", TYPES, '{"name":"one","value":1,"type":"integer"}', False, False),
    ("structSliceIndexReverse", "{ .structs[-2] }", TYPES, '{"name":"three","value":3,"type":"integer"}', False, False),
    ("structSubSliceFirst2", "{ .structs[0:2] }", TYPES,
     '{"name":"one","value":1,"type":"integer"} {"name":"two","value":2.002,"type":"float"}', False, False),
    ("structSubSliceFirst2Alt", "{ .structs[:2] }", TYPES,
     '{"name":"one","value":1,"type":"integer"} {"name":"two","value":2.002,"type":"float"}', False, False),
    ("structSubSliceStepOdd", "{ .structs[::2] }", TYPES,
     '{"name":"one","value":1,"type":"integer"} {"name":"three","value":3,"type":"integer"}', False, False),
    ("structSubSliceStepEven", "{ .structs[1::2] }", TYPES,
     '{"name":"two","value":2.002,"type":"float"} {"name":"four","value":4.004,"type":"float"}', False, False),
    # TestStructInput
    ("plain", "hello jsonpath", None, "hello jsonpath", False, False),
    ("recursive", "{..}", [1, 2, 3], "[1,2,3]", False, False),
    ("filter", "{[?(@<5)]}", [2, 6, 3, 7], "2 3", False, False),
    ("quote", '{"{"}', None, "{", False, False),
    ("union", "{[1,3,4]}", [0, 1, 2, 3, 4], "1 3 4", False, False),
    ("array", "{[0:2]}", ["Monday", "Tudesday"], "Monday Tudesday", False, False),
    ("variable", "hello {.Name}", STORE, "hello jsonpath", False, False),
    ("dict/ web/html", "{$.Labels.web/html}", STORE, "15", False, False),
    ("dict/ jason", "{$.Employees.jason}", STORE, "manager", False, False),
    ("dict/ dan", "{$.Employees.dan}", STORE, "clerk", False, False),
    ("dict-", "{.Labels.k8s-app}", STORE, "20", False, False),
    ("nest", "{.Bicycle[*].Color}", STORE, "red green", False, False),
    ("allarray", "{.Book[*].Author}", STORE, "Nigel Rees Evelyn Waugh Herman Melville", False, False),
    ("allfields", '{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}', STORE,
     "{red 19.95 true} {green 20.01 false} ", False, False),
    ("recurfields", "{..Price}", STORE, "8.95 12.99 8.99 19.95 20.01", False, False),
    ("recurdotfields", "{...Price}", STORE, "8.95 12.99 8.99 19.95 20.01", False, False),
    ("superrecurfields", "{" + "." * 60 + "Price}", STORE, "", True, False),
    ("allstructsSlice", "{.Bicycle}", STORE,
     '[{"Color":"red","Price":19.95,"IsNew":true},{"Color":"green","Price":20.01,"IsNew":false}]', False, False),
    ("allstructs", '{range .Bicycle[*]}{ @ }{ " " }{end}', STORE,
     '{"Color":"red","Price":19.95,"IsNew":true} {"Color":"green","Price":20.01,"IsNew":false} ', False, False),
    ("lastarray", "{.Book[-1:]}", STORE,
     '{"Category":"fiction","Author":"Herman Melville","Title":"Moby Dick","Price":8.99}', False, False),
    ("recurarray", "{..Book[2]}", STORE,
     '{"Category":"fiction","Author":"Herman Melville","Title":"Moby Dick","Price":8.99}', False, False),
    ("bool", "{.Bicycle[?(@.IsNew==true)]}", STORE, '{"Color":"red","Price":19.95,"IsNew":true}', False, False),
    ("nonexistent field (allowed)", "{.hello}", STORE, "", False, True),
    ("nonexistent field 2 (allowed)", "before-{.hello}after", STORE, "before-after", False, True),
    # TestJSONInput
    ("exists filter", "{[?(@.z)].id}", POINTS, "i2 i5", False, False),
    ("bracket key", "{[0]['id']}", POINTS, "i1", False, False),
    ("nil value", "{[-1]['x']}", POINTS, "null", False, False),
    # TestKubernetes
    ("range item", "{range .items[*]}{.metadata.name}, {end}{.kind}", NODES, "127.0.0.1, 127.0.0.2, List", False, False),
    ("range item with quote", '{range .items[*]}{.metadata.name}{"\\t"}{end}', NODES, "127.0.0.1\t127.0.0.2\t", False, False),
    ("range addresss", "{.items[*].status.addresses[*].address}", NODES, "127.0.0.1 127.0.0.2 127.0.0.3", False, False),
    ("double range", "{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}", NODES,
     "127.0.0.1, 127.0.0.2, 127.0.0.3, ", False, False),
    ("item name", "{.items[*].metadata.name}", NODES, "127.0.0.1 127.0.0.2", False, False),
    ("union nodes capacity", "{.items[*]['metadata.name', 'status.capacity']}", NODES,
     '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}', False, False),
    ("range nodes capacity", "{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}", NODES,
     '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] ', False, False),
    ("user password", '{.users[?(@.name=="e2e")].user.password}', NODES, "secret", False, False),
    ("hostname", "{.items[0].metadata.labels.kubernetes\\.io/hostname}", NODES, "127.0.0.1", False, False),
    ("hostname filter", '{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}', NODES,
     "None", False, False),
    ("bool item", "{.items[?(@..ready==true)].metadata.name}", NODES, "127.0.0.1", False, False),
    # TestEmptyRange
    ("empty range", "{range .items[*]}{.metadata.name}{end}", EMPTY_LIST, "", False, True),
    ("empty nested range",
     '{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}',
     EMPTY_LIST, "", False, True),
    # TestNestedRanges
    ("nested range with a trailing newline",
     '{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}',
     PODS, "pod1:foo,bar,+pod2:baz,+", False, False),
    ("nested range within another nested range",
     '{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}'
     '{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}',
     PODS, "pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#", False, False),
    ("two nested ranges at the same level",
     '{range .items[*]}{.metadata.name}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\t"}'
     '{range @.spec.containers[*]}{.name}{" "}{end}{"\\n"}{end}',
     PODS, "pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n", False, False),
    # TestFilterPartialMatchesSometimesMissingAnnotations
    ("filter with missing annotations (allowed)", '{.items[?(@.metadata.annotations.color=="blue")].metadata.name}',
     ANNOTATED, "pod1 pod4", False, True),
    ("filter with missing annotations (not allowed)",
     '{.items[?(@.metadata.annotations.color=="blue")].metadata.name}', ANNOTATED, "", True, False),
    # TestNegativeIndex
    ("containers[0]", "{.spec.containers[0].name}", FOUR_CONTAINERS, "fake0", False, False),
    ("containers[0:0]", "{.spec.containers[0:0].name}", FOUR_CONTAINERS, "", False, False),
    ("containers[0:-1]", "{.spec.containers[0:-1].name}", FOUR_CONTAINERS, "fake0 fake1 fake2", False, False),
    ("containers[-1:0]", "{.spec.containers[-1:0].name}", FOUR_CONTAINERS, "", True, False),
    ("containers[-1]", "{.spec.containers[-1].name}", FOUR_CONTAINERS, "fake3", False, False),
    ("containers[-1:]", "{.spec.containers[-1:].name}", FOUR_CONTAINERS, "fake3", False, False),
    ("containers[-2]", "{.spec.containers[-2].name}", FOUR_CONTAINERS, "fake2", False, False),
    ("containers[-2:]", "{.spec.containers[-2:].name}", FOUR_CONTAINERS, "fake2 fake3", False, False),
    ("containers[-3]", "{.spec.containers[-3].name}", FOUR_CONTAINERS, "fake1", False, False),
    ("containers[-4]", "{.spec.containers[-4].name}", FOUR_CONTAINERS, "fake0", False, False),
    ("containers[-4:]", "{.spec.containers[-4:].name}", FOUR_CONTAINERS, "fake0 fake1 fake2 fake3", False, False),
    ("containers[-5]", "{.spec.containers[-5].name}", FOUR_CONTAINERS, "", True, False),
    ("containers[5:5]", "{.spec.containers[5:5].name}", FOUR_CONTAINERS, "", False, False),
    ("containers[-5:-5]", "{.spec.containers[-5:-5].name}", FOUR_CONTAINERS, "", False, False),
    ("containers[3:1]", "{.spec.containers[3:1].name}", FOUR_CONTAINERS, "", True, False),
    ("containers[-1:-2]", "{.spec.containers[-1:-2].name}", FOUR_CONTAINERS, "", True, False),
    # TestRunningPodsJSONPathOutput
    ("range over pods without selecting the last one",
     '{range .items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\\n"}{end}', RUNNING,
     "pod1 is Running\npod2 is Running\npod3 is Running\n", False, True),
    # TestStep
    ("containers[0:]", "{.spec.containers[0:].name}", SIX_CONTAINERS, "fake0 fake1 fake2 fake3 fake4 fake5", False, False),
    ("containers[0:6:]", "{.spec.containers[0:6:].name}", SIX_CONTAINERS, "fake0 fake1 fake2 fake3 fake4 fake5", False, False),
    ("containers[0:6:1]", "{.spec.containers[0:6:1].name}", SIX_CONTAINERS, "fake0 fake1 fake2 fake3 fake4 fake5", False, False),
    ("containers[0:6:0]", "{.spec.containers[0:6:0].name}", SIX_CONTAINERS, "", True, False),
    ("containers[0:6:-1]", "{.spec.containers[0:6:-1].name}", SIX_CONTAINERS, "", True, False),
    ("containers[1:4:2]", "{.spec.containers[1:4:2].name}", SIX_CONTAINERS, "fake1 fake3", False, False),
    ("containers[1:4:3]", "{.spec.containers[1:4:3].name}", SIX_CONTAINERS, "fake1", False, False),
    ("containers[1:4:4]", "{.spec.containers[1:4:4].name}", SIX_CONTAINERS, "fake1", False, False),
    ("containers[0:6:2]", "{.spec.containers[0:6:2].name}", SIX_CONTAINERS, "fake0 fake2 fake4", False, False),
    ("containers[0:6:3]", "{.spec.containers[0:6:3].name}", SIX_CONTAINERS, "fake0 fake3", False, False),
    ("containers[0:6:5]", "{.spec.containers[0:6:5].name}", SIX_CONTAINERS, "fake0 fake5", False, False),
    ("containers[0:6:6]", "{.spec.containers[0:6:6].name}", SIX_CONTAINERS, "fake0", False, False),
]

# TestKubernetes "recursive name": map order is random in Go, so only the sorted words count.
SORTED_OUTPUT_CASES = [
    ("recursive name", "{..name}", NODES, "127.0.0.1 127.0.0.2 myself e2e"),
]

# TestStructInput failStoreTests: (name, template, input, kubectl's error text)
ERROR_CASES = [
    ("invalid identifier", "{hello}", STORE, "unrecognized identifier hello"),
    ("nonexistent field", "{.hello}", STORE, "hello is not found"),
    ("invalid array", "{.Labels[0]}", STORE, "map[string]int is not array or slice"),
    ("invalid filter operator", "{.Book[?(@.Price<>10)]}", STORE, "unrecognized filter operator <>"),
    ("redundant end", "{range .Labels.*}{@}{end}{end}", STORE, "not in range, nothing to end"),
]

_SORTED_KEYS = ("objects print with sorted keys and wildcards visit keys in sorted order; the upstream "
                "input is a Go struct, printed in declaration order (for JSON objects kubectl sorts keys too)")
_MISSING = ("kidx always reads missing keys as kubectl's default --allow-missing-template-keys=true does; "
            "the upstream case runs with missing keys disallowed")

# name -> (kidx's output, or its error text when it starts with "error:", reason)
DIVERGENCES = {
    "structSlice": ('[{"name":"one","type":"integer","value":1},{"name":"two","type":"float","value":2.002},'
                    '{"name":"three","type":"integer","value":3},{"name":"four","type":"float","value":4.004}]',
                    _SORTED_KEYS),
    "structSliceIndex": ('{"name":"one","type":"integer","value":1}', _SORTED_KEYS),
    "structSliceIndexReverse": ('{"name":"three","type":"integer","value":3}', _SORTED_KEYS),
    "structSubSliceFirst2": ('{"name":"one","type":"integer","value":1} {"name":"two","type":"float","value":2.002}',
                             _SORTED_KEYS),
    "structSubSliceFirst2Alt": ('{"name":"one","type":"integer","value":1} '
                                '{"name":"two","type":"float","value":2.002}', _SORTED_KEYS),
    "structSubSliceStepOdd": ('{"name":"one","type":"integer","value":1} '
                              '{"name":"three","type":"integer","value":3}', _SORTED_KEYS),
    "structSubSliceStepEven": ('{"name":"two","type":"float","value":2.002} '
                               '{"name":"four","type":"float","value":4.004}', _SORTED_KEYS),
    "allfields": ("{red true 19.95} {green false 20.01} ", _SORTED_KEYS),
    "recurfields": ("19.95 20.01 8.95 12.99 8.99", _SORTED_KEYS),
    "recurdotfields": ("19.95 20.01 8.95 12.99 8.99", _SORTED_KEYS),
    "allstructsSlice": ('[{"Color":"red","IsNew":true,"Price":19.95},{"Color":"green","IsNew":false,"Price":20.01}]',
                        _SORTED_KEYS),
    "allstructs": ('{"Color":"red","IsNew":true,"Price":19.95} {"Color":"green","IsNew":false,"Price":20.01} ',
                   _SORTED_KEYS),
    "lastarray": ('{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}', _SORTED_KEYS),
    "recurarray": ('{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}', _SORTED_KEYS),
    "bool": ('{"Color":"red","IsNew":true,"Price":19.95}', _SORTED_KEYS),
    "union nodes capacity": ("",
                             "['a.b'] is the key a.b, so keys containing dots (label keys) can be named; "
                             "kubectl splits it into .a.b"),
    "filter with missing annotations (not allowed)": ("pod1 pod4", _MISSING),
}

# name -> (kidx's error text, reason)
ERROR_DIVERGENCES = {
    "nonexistent field": (None, _MISSING),  # None: kidx prints nothing, no error
    "invalid array": ("map[string]interface {} is not array or slice",
                      "the same error; kubectl names the Go type of the upstream input (map[string]int), "
                      "for JSON objects it says map[string]interface {} as kidx does"),
    "invalid filter operator": ('unexpected ">", expected a path or a literal',
                                "the same template is refused, at the lexer instead of the evaluator"),
}
