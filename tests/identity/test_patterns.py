"""The machine's values found with their boundaries, and nothing else touched."""

from __future__ import annotations

import functools
import json

from hypothesis import given
from hypothesis import strategies as st
from property_settings import property_settings

from promptvcr.identity import Identity, MachineValue, restorer
from promptvcr.identity.patterns import COMMON_NAMES

ALICE = (
    MachineValue("project", "/home/alice/src/app", "path"),
    MachineValue("home", "/home/alice", "path"),
    MachineValue("tmp", "/tmp/alice-scratch", "path"),
    MachineValue("user", "alice", "name"),
    MachineValue("host", "alice-laptop", "name"),
    MachineValue("address", "10.20.30.40", "token"),
)
BOB = (
    MachineValue("project", "/Users/bob/work/app", "path"),
    MachineValue("home", "/Users/bob", "path"),
    MachineValue("tmp", "/var/folders/xy/T", "path"),
    MachineValue("user", "bob", "name"),
    MachineValue("host", "bobs-mac", "name"),
    MachineValue("address", "192.168.1.7", "token"),
)


@functools.lru_cache(maxsize=64)
def identity_of(values: tuple[MachineValue, ...]) -> Identity:
    """One built per set of values (a regular expression each): the properties run hundreds of texts."""
    return Identity(values)


def replaced(text: str, values: tuple[MachineValue, ...] = ALICE) -> str:
    return identity_of(values).text(text)


def test_a_path_is_replaced_as_a_prefix_and_the_most_specific_wins() -> None:
    assert replaced("open /home/alice/src/app/main.py") == "open <project>/main.py"
    assert replaced("see /home/alice/.bashrc and /home/alice.") == "see <home>/.bashrc and <home>."
    assert (
        replaced("/home/alicea/x /home/alice-old /x/home/alice/y")
        == "/home/alicea/x /home/alice-old /x/home/<user>/y"
    )
    assert replaced("file:///home/alice/x") == "file://<home>/x"


def test_json_escaped_and_url_encoded_forms_are_found() -> None:
    assert replaced('{"p": "\\/home\\/alice\\/src\\/app\\/x"}') == '{"p": "<project>\\/x"}'
    assert replaced("?path=%2Fhome%2Falice%2Fnotes") == "?path=%3Chome%3E%2Fnotes"


def test_a_specific_name_is_replaced_as_a_whole_token_only() -> None:
    assert (
        replaced("alice@alice-laptop: malice alice2 alice_x alice")
        == "<user>@<host>: malice alice2 alice_x <user>"
    )
    assert replaced("10.20.30.40:80 10.20.30.401 110.20.30.40") == "<address>:80 10.20.30.401 110.20.30.40"


def test_a_short_or_common_name_is_replaced_only_inside_a_path() -> None:
    for name in ("ci", "root", "runner", "bob"):
        values = (MachineValue("user", name, "name"),)
        text = f"{name} says hi to {name}; /opt/{name}/x /data/{name}"
        assert replaced(text, values) == f"{name} says hi to {name}; /opt/<user>/x /data/<user>"


def test_a_common_name_that_is_also_a_folder_is_told_apart_by_its_boundary() -> None:
    values = (MachineValue("home", "/root", "path"), MachineValue("user", "root", "name"))
    assert replaced("/root/x x/root/y root", values) == "<home>/x x/<user>/y root"


def test_the_replaying_machine_gets_its_own_values_back_and_only_the_marked_ones() -> None:
    recorded = replaced("alice works in /home/alice/src/app/x on alice-laptop")
    back = restorer(BOB, ["project", "user", "host"])
    assert back is not None
    assert back.text(recorded) == "bob works in /Users/bob/work/app/x on bobs-mac"
    only_user = restorer(BOB, ["user"])
    assert only_user is not None
    assert only_user.text("<home> and <user>") == "<home> and bob"  # <home> was the provider's own
    quoted = restorer(BOB, ["home"])
    assert quoted is not None
    assert (
        quoted.content(b'{"p": "<home>", "q": "%3Chome%3E"}', json_text=True)
        == b'{"p": "/Users/bob", "q": "%2FUsers%2Fbob"}'
    )


def test_a_value_json_needs_escaped_is_restored_escaped_in_json() -> None:
    back = restorer((MachineValue("home", 'C:\\Users\\o"hara', "path"),), ["home"])
    assert back is not None
    restored = back.content(b'{"p": "<home>\\\\x"}', json_text=True)
    assert json.loads(restored) == {"p": 'C:\\Users\\o"hara\\x'}


# Text that holds none of the machine's values: any text, the values' pieces glued on its sides.
_PIECES = st.sampled_from(
    ["/home/", "alic", "lice", "/src/app", "10.20.30.", "-laptop", "/tmp/", "%2F", "\\/"]
)
_FREE = st.lists(st.one_of(st.text(max_size=12), _PIECES), max_size=12).map("".join)


@property_settings(80)
@given(_FREE)
def test_text_without_a_machine_value_stays_byte_for_byte(text: str) -> None:
    identity = identity_of(ALICE)
    identity.used.clear()
    if any(value.text in text for value in ALICE) or "%2Fhome%2Falice" in text or "\\/home\\/alice" in text:
        return  # glued into a value after all: the other tests say what happens then
    assert identity.text(text) == text
    assert identity.content(text.encode()) == text.encode()
    assert not identity.used


@property_settings(100)
@given(
    st.sampled_from(sorted(COMMON_NAMES)),
    st.lists(st.sampled_from([" ", ".", ",", "-", "@", ":", "x"]), max_size=6),
)
def test_a_common_user_name_is_left_as_a_word(name: str, around: list[str]) -> None:
    text = name.join(["", *around, ""])  # the name beside punctuation, never after a slash
    assert identity_of((MachineValue("user", name, "name"),)).text(text) == text


@property_settings(100)
@given(
    st.lists(
        st.sampled_from(["/home/alice/src/app/", "/home/alice/", "alice", " ", "x.py", "\n", "alice-laptop"]),
        max_size=10,
    ).map("".join)
)
def test_replaced_then_restored_on_the_same_machine_is_the_text_again(text: str) -> None:
    identity = identity_of(ALICE)
    identity.used.clear()
    written = identity.text(text)
    back = restorer(ALICE, identity.used)
    assert (back.text(written) if back is not None else written) == text
