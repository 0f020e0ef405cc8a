"""Cases of kubernetes/kubectl ``pkg/cmd/get/customcolumn_test.go`` (Apache-2.0), as data."""

# TestMassageJSONPath: relaxed path -> normalised path, or None for an error
RELAXED = [
    ("foo.bar", "{.foo.bar}"),
    ("{foo.bar}", "{.foo.bar}"),
    (".foo.bar", "{.foo.bar}"),
    ("{.foo.bar}", "{.foo.bar}"),
    ("", ""),
    ("{foo.bar", None),
    ("foo.bar}", None),
    ("{foo.bar}}", None),
    ("{{foo.bar}", None),
]

# TestNewColumnPrinterFromSpec: spec -> columns, or None for an error
SPECS = [
    ("", None),
    ("invalid", None),
    ("invalid=foobar", None),
    ("invalid,foobar:blah", None),
    ("NAME:metadata.name,API_VERSION:apiVersion", [("NAME", "{.metadata.name}"), ("API_VERSION", "{.apiVersion}")]),
]

# TestNewColumnPrinterFromTemplate: file text -> columns, or None for an error
TEMPLATES = [
    ("", None),
    ("invalid", None),
    ("invalid=foobar", None),
    ("invalid,foobar:blah", None),
    ("NAME               API_VERSION\n{metadata.name}    {apiVersion}",
     [("NAME", "{.metadata.name}"), ("API_VERSION", "{.apiVersion}")]),
    ("NAME               \t\tAPI_VERSION\n\t\t\t\t\t\t\t{metadata.name}    {apiVersion}",
     [("NAME", "{.metadata.name}"), ("API_VERSION", "{.apiVersion}")]),
]

# TestColumnPrint and TestIndividualPrintObjOnExistingTabWriter: (columns, objects, output)
PRINTS = [
    ([("NAME", "{.metadata.name}")], [{"metadata": {"name": "foo"}}], "NAME\nfoo\n"),
    ([("NAME", "{.metadata.name}")], [{"metadata": {"name": "foo"}}, {"metadata": {"name": "bar"}}],
     "NAME\nfoo\nbar\n"),
    ([("NAME", "{.metadata.name}"), ("API_VERSION", "{.apiVersion}")],
     [{"apiVersion": "baz", "metadata": {"name": "foo"}}], "NAME   API_VERSION\nfoo    baz\n"),
    ([("NAME", "{.metadata.name}"), ("API_VERSION", "{.apiVersion}"), ("NOT_FOUND", "{.notFound}")],
     [{"apiVersion": "baz", "metadata": {"name": "foo"}}],
     "NAME   API_VERSION   NOT_FOUND\nfoo    baz           <none>\n"),
    ([("NAME", "{.metadata.name}")], [{"metadata": {"name": "\x1b \r"}}], "NAME\n^[ \\r\n"),
    ([("NAME", "{.metadata.name}"), ("LONG COLUMN NAME", "{.metadata.labels.label1}"),
      ("LABEL 2", "{.metadata.labels.label2}")],
     [{"metadata": {"name": "foo", "labels": {"label1": "foo", "label2": "foo"}}},
      {"metadata": {"name": "bar", "labels": {"label1": "bar", "label2": "bar"}}}],
     "NAME   LONG COLUMN NAME   LABEL 2\nfoo    foo                foo\nbar    bar                bar\n"),
]

# TestSliceColumnPrint: a pod with containers fake0..fake3; (spec, output or None for an error)
POD = {"metadata": {"name": "fake-name"}, "spec": {"containers": [{"name": f"fake{i}"} for i in range(4)]}}
SLICES = [
    ("CONTAINER:.spec.containers[0].name", "CONTAINER\nfake0\n"),
    ("CONTAINER:.spec.containers[3].name", "CONTAINER\nfake3\n"),
    ("CONTAINER:.spec.containers[5].name", None),
    ("CONTAINER:.spec.containers[-1].name", "CONTAINER\nfake3\n"),
    ("CONTAINER:.spec.containers[-2].name", "CONTAINER\nfake2\n"),
    ("CONTAINER:.spec.containers[-4].name", "CONTAINER\nfake0\n"),
    ("CONTAINER:.spec.containers[-5].name", None),
    ("CONTAINER:.spec.containers[0:0].name", "CONTAINER\n<none>\n"),
    ("CONTAINER:.spec.containers[0:3].name", "CONTAINER\nfake0,fake1,fake2\n"),
    ("CONTAINER:.spec.containers[1:].name", "CONTAINER\nfake1,fake2,fake3\n"),
    ("CONTAINER:.spec.containers[3:1].name", None),
    ("CONTAINER:.spec.containers[0:-1].name", "CONTAINER\nfake0,fake1,fake2\n"),
    ("CONTAINER:.spec.containers[-1:].name", "CONTAINER\nfake3\n"),
    ("CONTAINER:.spec.containers[-4:].name", "CONTAINER\nfake0,fake1,fake2,fake3\n"),
    ("CONTAINER:.spec.containers[-3:-1].name", "CONTAINER\nfake1,fake2\n"),
    ("CONTAINER:.spec.containers[-2:-3].name", None),
    ("CONTAINER:.spec.containers[4:4].name", "CONTAINER\n<none>\n"),
    ("CONTAINER:.spec.containers[-5:-5].name", "CONTAINER\n<none>\n"),
]
