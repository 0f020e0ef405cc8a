"""Store locations that are URLs: a password is never printed, whatever it holds, and a
mistyped scheme is an error, never a folder whose path holds the password."""

from __future__ import annotations

import pytest
from conftest import SEED_BUNDLE

from kidx.store.postgres_url import masked, scrubbed

PASSWORDS = ["pa?ss#word", "pa/ss", "p@ss", "a#b?c/d@e", "s3cr%40t", "plain"]


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_password_with_url_delimiters_is_masked(password):
    url = f"postgresql://k2:{password}@db.example.org:5432/team?sslmode=require"
    assert masked(url) == "postgresql://k2:***@db.example.org:5432/team?sslmode=require"
    assert scrubbed(f"failed: {password} at {url}", url) == f"failed: *** at {masked(url)}"


def test_a_password_in_the_query_string_with_a_hash_is_masked():
    assert masked("postgresql://u@h/db?password=pa#ss&x=1") == "postgresql://u@h/db?password=***&x=1"


@pytest.mark.parametrize("location", [
    "postgresq://kidx:Sekrit-pw@db.example.org/team",
    "pgsql://kidx:Sekrit-pw@db.example.org/team",
    "postgresql:/kidx:Sekrit-pw@db.example.org/team",
    "POSTGRESQL:/kidx:Sekrit-pw@db.example.org/team",
    "postgres:/kidx:Sekrit-pw@db.example.org/team",
    "mysql://kidx:Sekrit-pw@db.example.org/team",
])
def test_a_mistyped_scheme_is_an_error_and_makes_no_folder(kidx, tmp_path, monkeypatch, location):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seed.json").write_text(SEED_BUNDLE.read_text(encoding="utf-8"), encoding="utf-8")
    for command in (("apply", "-f", "seed.json"), ("get", "runs")):
        code, out, err = kidx(*command, store_path=location)
        assert (code, out) == (1, "")
        assert "Sekrit" not in err and "No resources found" not in err
        assert err.startswith("error: ")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["seed.json"]  # no store folder made
    code, _, err = kidx("push", location, store_path=tmp_path / "local")
    assert code == 1 and "Sekrit" not in err


def test_the_refusals_say_what_to_write(kidx, tmp_path):
    assert kidx("get", "runs", store_path="postgresq://kidx:Sekrit-pw@db.example.org/team") == (
        1, "", "error: unknown store URL scheme 'postgresq' in postgresq://kidx:***@db.example.org/team: a store "
               "is a folder or a postgresql:// URL; did you mean postgresql://? (a folder of that name is written "
               "./postgresq:…)\n")
    assert kidx("get", "runs", store_path="postgresql:/kidx:Sekrit-pw@db.example.org/team") == (
        1, "", "error: postgresql:/kidx:***@db.example.org/team is not a store URL: write postgresql://… (a folder "
               "of that name is written ./postgresql:…)\n")


@pytest.mark.parametrize("location, suggestion", [
    ("host=db dbname=team user=kidx password=Sekrit-pw", "postgresql://kidx:***@db/team"),
    ("  dbname=team host=/run/postgresql port=5433 password='Sekrit pw'",
     "postgresql:///team?host=/run/postgresql&port=5433"),
])
def test_a_keyword_value_connection_string_is_refused_with_its_password_masked(kidx, tmp_path, monkeypatch,
                                                                              location, suggestion):
    import kidx as api
    from kidx.errors import KidxError

    monkeypatch.chdir(tmp_path)
    (tmp_path / "seed.json").write_text(SEED_BUNDLE.read_text(encoding="utf-8"), encoding="utf-8")
    shown = location.replace("'Sekrit pw'", "***").replace("Sekrit-pw", "***")
    expected = (f"error: {shown!r} is a PostgreSQL keyword/value connection string, not a store location: write it "
                f"as a URL, {suggestion}\n")
    for command in (("apply", "-f", "seed.json"), ("get", "runs")):
        assert kidx(*command, store_path=location) == (1, "", expected)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["seed.json"]  # no folder named with the password
    with pytest.raises(KidxError) as raised:
        api.open_store(location)
    assert "Sekrit" not in str(raised.value) and str(raised.value) == expected[len("error: "):-1]
    assert masked(location) == shown


def test_a_folder_named_like_a_url_is_reached_through_dot_slash(kidx, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seed.json").write_text(SEED_BUNDLE.read_text(encoding="utf-8"), encoding="utf-8")
    assert kidx("apply", "-f", "seed.json", store_path="./odd:/store")[0] == 0
    assert (tmp_path / "odd:" / "store" / "catalog.sqlite").is_file()


def test_a_scheme_in_capitals_is_still_postgresql(kidx, postgres_server, postgres_store, tmp_path):
    url = str(postgres_store).replace("postgresql://", "POSTGRESQL://")
    (tmp_path / "seed.json").write_text(SEED_BUNDLE.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, err = kidx("apply", "-f", str(tmp_path / "seed.json"), store_path=url)
    assert (code, out.count(" created\n")) == (0, 3), err
    assert postgres_store.exists()
    assert kidx("get", "runs", "-o", "name", store_path=url)[1] == kidx(
        "get", "runs", "-o", "name", store_path=postgres_store)[1] != ""


@pytest.mark.parametrize("password", ["pa?ss#word", "p@ss"])
def test_push_result_line_masks_a_password_with_delimiters(kidx, postgres_store, tmp_path, password):
    """The test cluster trusts local connections, so any password connects: the result line
    shows the location with *** in its place."""
    local = tmp_path / "local"
    (tmp_path / "seed.json").write_text(SEED_BUNDLE.read_text(encoding="utf-8"), encoding="utf-8")
    assert kidx("apply", "-f", str(tmp_path / "seed.json"), store_path=local)[0] == 0
    url = str(postgres_store).replace("postgresql://postgres@", f"postgresql://postgres:{password}@")
    shown = str(postgres_store).replace("postgresql://postgres@", "postgresql://postgres:***@")
    code, out, err = kidx("push", url, store_path=local)
    assert (code, err) == (0, f"{shown}: copied 3 objects; 3 names changed, 0 unchanged\n")
    assert password not in out + err


def test_a_password_with_a_slash_is_masked_in_the_drivers_error(kidx, postgres_server):
    url = f"postgresql://nobody:pa/ss@/postgres?host={postgres_server.folder}"
    code, out, err = kidx("get", "runs", store_path=url)
    assert (code, out) == (1, "")
    assert err.startswith("error: cannot connect to the store at postgresql://nobody:***@/postgres?host="), err
    assert "pa/ss" not in err and "ss@" not in err

