import hashlib, json, sys
m = json.load(sys.stdin)  # one manifest, e.g. from `kidx get TYPE NAME -o json`
print("sha256:" + hashlib.sha256(json.dumps({k: m[k] for k in ("apiVersion", "kind", "spec")}, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")).hexdigest())
