"""The one masking of a database URL (issue 28 item 7), as a property over generated passwords
in every form SQLAlchemy and libpq take one, and --db-file's refusals. Pure functions and files:
the real server's side is in test_db_access.py."""

import os
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vpnbench.foundation.errors import UserError
from vpnbench.store.db_url import display_name, read_url_file, scrub

# Any character but NUL (no URL, file or environment holds one) and lone surrogates; marked at both
# ends so a short password is not found by chance in the rest of the URL.
characters = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
passwords = st.text(characters, max_size=24).map(lambda text: f"Zq{text}Zq")


def forms(password: str) -> list[str]:
    """The URLs a password reaches libpq in: userinfo percent-encoded or as typed (SQLAlchemy reads
    it to the first '@', so / ? # : pass), a password= or sslpassword= query parameter in any case."""
    encoded = quote(password, safe="")
    found = [f"postgresql://bench:{encoded}@db.example:5432/results?sslmode=require",
             f"postgres://bench:{encoded}@/results?host=/run/postgresql",
             f"postgresql+psycopg://bench:{password}@db.example/results",
             f"postgresql://bench@db.example/results?host=/run/pg&password={encoded}&sslmode=require",
             f"postgresql://bench@db.example/results?PassWord={encoded}",
             f"postgresql://bench@db.example/results?sslmode=verify-full&sslpassword={encoded}"]
    if "&" not in password:  # a parameter's value as typed ends at the next '&'
        found.append(f"postgresql://bench@db.example/results?password={password}")
    return found


def shown_forms(password: str) -> set[str]:
    return {password, quote(password, safe=""), quote(password), repr(password)[1:-1]}


@settings(max_examples=300, deadline=None)
@given(passwords)
def test_no_form_of_a_url_shows_its_password(password):
    for url in forms(password):
        shown = display_name(url)
        assert [form for form in shown_forms(password) if form in shown] == [], (url, shown)
        assert shown.startswith(url.split("//")[0] + "//bench")  # the rest stays readable


@settings(max_examples=200, deadline=None)
@given(passwords)
def test_an_error_message_quoting_the_url_or_its_password_is_scrubbed(password):
    for url in forms(password):
        message = f"Could not parse SQLAlchemy URL from string '{url}'; password {password!r} rejected"
        scrubbed = scrub(message, url)
        assert [form for form in shown_forms(password) if form in scrubbed] == [], (url, scrubbed)


def test_what_masking_keeps_and_what_it_hides():
    assert display_name("postgresql://bench:s3cret@db.example/results") == "postgresql://bench:***@db.example/results"
    assert display_name("postgresql://bench:p/a?s#s@db/r?host=/s") == "postgresql://bench:***@db/r?host=/s"
    assert display_name("postgresql://bench@/r?host=/s&password=x1y2&sslmode=require") == \
        "postgresql://bench@/r?host=/s&password=***&sslmode=require"
    assert display_name("postgresql://bench@db:5432/r") == "postgresql://bench@db:5432/r"
    assert display_name("/var/lib/vpnbench/results.db") == "/var/lib/vpnbench/results.db"
    assert display_name("host=db user=bench password='a b c' dbname=r") == "host=db user=bench password=*** dbname=r"


def test_a_url_file_must_be_the_users_own_and_private(tmp_path):
    url = tmp_path / "db.url"
    url.write_text("\npostgresql://bench:s3cret@db/results\n")
    url.chmod(0o600)
    assert read_url_file(str(url)) == "postgresql://bench:s3cret@db/results"
    for mode in (0o640, 0o604, 0o660):
        url.chmod(mode)
        with pytest.raises(UserError, match=rf"^--db-file: .* is readable by others \(mode {mode:04o}\); allowed: 0600"):
            read_url_file(str(url))
    url.chmod(0o600)
    url.write_text("postgresql://a@db/r\npostgresql://b@db/r\n")
    with pytest.raises(UserError, match=r"^--db-file: .* holds 2 lines; allowed: one"):
        read_url_file(str(url))
    link = tmp_path / "link"
    link.symlink_to(url)
    with pytest.raises(UserError, match=r"^--db-file: .*: Too many levels of symbolic links"):
        read_url_file(str(link))
    if os.geteuid() == 0:
        os.chown(url, 65534, -1)
        with pytest.raises(UserError, match=r"^--db-file: .* belongs to uid 65534, not to the user running vpnbench"):
            read_url_file(str(url))
