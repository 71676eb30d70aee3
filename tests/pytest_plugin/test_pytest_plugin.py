"""The pytest plugin, driven through pytester: marker, fixture, configuration, record modes, misses.

Each test writes a small test suite into a temporary directory and runs pytest on it, so
the plugin is exercised as users meet it. The inner suites call the real openai SDK; replay
runs point it at a port where nothing listens, recording runs at the loopback fake provider.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fake_provider import FakeProvider
from plugin_suites import chat, make_suite, run, write_cassette

from promptvcr.pytest_plugin.naming import MAX_NAME_LENGTH, cassette_file_name

# The marker and the fixture ------------------------------------------------------------------


def test_marker_replays_the_default_cassette_beside_the_test(pytester: pytest.Pytester) -> None:
    make_suite(
        pytester,
        test_app="""
        import pytest
        from llm import ask

        @pytest.mark.promptvcr
        def test_hello():
            assert ask("hello") == "Hi!"
        """,
    )
    write_cassette(pytester.path / "cassettes/test_app/test_hello.yaml", chat("hello", "Hi!"))
    run(pytester).assert_outcomes(passed=1)


def test_the_fixture_alone_starts_the_default_cassette_and_plain_tests_get_none(
    pytester: pytest.Pytester,
) -> None:
    make_suite(
        pytester,
        test_app="""
        import openai
        import pytest
        from llm import ask

        def test_with_fixture(cassette):
            assert ask("hello") == "Hi!"
            assert [play.outcome for play in cassette.played] == ["replayed"]
            assert cassette.path.parts[-3:] == ("cassettes", "test_app", "test_with_fixture.yaml")

        def test_without_either():
            with pytest.raises(openai.APIConnectionError):
                ask("hello")  # nothing intercepts: the SDK meets the closed port
        """,
    )
    write_cassette(pytester.path / "cassettes/test_app/test_with_fixture.yaml", chat("hello", "Hi!"))
    run(pytester).assert_outcomes(passed=2)


def test_a_plugins_autouse_fixture_that_asks_for_the_cassette_first_gets_the_same_one(
    pytester: pytest.Pytester,
) -> None:
    """The plugin's autouse fixture enters the cassette; an autouse fixture of a plugin
    loaded before it (``-p``), that asks for ``cassette``, enters it instead: once, for the
    whole test, and the cassette is still left and reported after it."""
    make_suite(
        pytester,
        users_plugin="""
        import pytest
        from promptvcr.activation import active_cassettes

        SEEN = []

        @pytest.fixture(autouse=True)
        def users_first(request):
            if "uses_cassette" in request.keywords:
                SEEN.append((len(active_cassettes()), request.getfixturevalue("cassette")))
            yield
        """,
        test_app="""
        import pytest
        from llm import ask
        from promptvcr.activation import active_cassettes
        from users_plugin import SEEN

        @pytest.mark.uses_cassette
        @pytest.mark.promptvcr
        def test_first(cassette):
            assert ask("hello") == "Hi!"
            assert SEEN == [(0, cassette)]  # nothing was active before the plugin's fixture asked
            assert active_cassettes() == (cassette,)
            assert [play.outcome for play in cassette.played] == ["replayed"]

        @pytest.mark.promptvcr
        def test_second():
            assert ask("hello") == "Hi!"
            assert len(active_cassettes()) == 1
        """,
    )
    pytester.syspathinsert()
    write_cassette(pytester.path / "cassettes/test_app/test_first.yaml", chat("hello", "Hi!"))
    write_cassette(pytester.path / "cassettes/test_app/test_second.yaml", chat("hello", "Hi!"))
    result = run(
        pytester, "-p", "users_plugin", "-p", "no:randomly", "-W", "ignore::pytest.PytestUnknownMarkWarning"
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["cassettes used: 2, by 2 tests*", "*2 replayed, 0 recorded, 0 missed"])


def test_marker_path_is_relative_to_the_test_file_and_options_reach_the_cassette(
    pytester: pytest.Pytester,
) -> None:
    make_suite(
        pytester,
        test_app="""
        import pytest
        import promptvcr
        from llm import ask

        @pytest.mark.promptvcr("recorded/shared.yaml", allow_playback_repeats=True)
        def test_repeats(cassette):
            assert ask("hello") == ask("hello") == "Hi!"

        @pytest.mark.promptvcr(path="recorded/shared.yaml")
        def test_no_repeats():
            assert ask("hello") == "Hi!"
            with pytest.raises(promptvcr.CassetteMiss, match="already been played"):
                ask("hello")
        """,
    )
    write_cassette(pytester.path / "recorded/shared.yaml", chat("hello", "Hi!"))
    result = run(pytester)
    # The second request missed (no repeats); the test caught the miss, so the plugin fails it.
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*_ test_no_repeats _*", "*already been played*", "*caught this CassetteMiss*"]
    )


def test_unknown_marker_option_is_a_clear_error(pytester: pytest.Pytester) -> None:
    make_suite(
        pytester,
        test_app="""
        import pytest

        @pytest.mark.promptvcr(allow_repeats=True)
        def test_typo():
            pass
        """,
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*promptvcr: unknown option(s) allow_repeats in the promptvcr marker of test_app.py::test_typo.*"]
    )
    result.stdout.fnmatch_lines(["*Valid options: allow_playback_repeats, *"])


def test_promptvcr_config_set_per_directory_and_the_marker_wins(pytester: pytest.Pytester) -> None:
    make_suite(pytester)
    sub = pytester.mkpydir("sub")
    (sub / "conftest.py").write_text(
        textwrap.dedent(
            """
            import pytest

            @pytest.fixture
            def promptvcr_config():
                return {"cassette_dir": "recordings", "allow_playback_repeats": True}
            """
        )
    )
    (sub / "test_sub.py").write_text(
        textwrap.dedent(
            """
            import pytest
            import promptvcr
            from llm import ask

            def test_configured(cassette):
                assert ask("hello") == ask("hello") == "Hi!"

            @pytest.mark.promptvcr(allow_playback_repeats=False)
            def test_marker_wins():
                ask("hello")
                with pytest.raises(promptvcr.CassetteMiss):
                    ask("hello")
            """
        )
    )
    (pytester.path / "test_top.py").write_text(
        textwrap.dedent(
            """
            def test_default_config(cassette):
                assert cassette.allow_playback_repeats is False
                assert cassette.path.parts[-3:] == ("cassettes", "test_top", "test_default_config.yaml")
            """
        )
    )
    for name in ("test_configured", "test_marker_wins"):
        write_cassette(sub / f"recordings/test_sub/{name}.yaml", chat("hello", "Hi!"))
    result = run(pytester)
    # The marker's allow_playback_repeats=False won: the repeat missed, and the caught miss fails the test.
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*_ test_marker_wins _*", "*already been played*", "*caught this CassetteMiss*"]
    )


def test_unknown_config_key_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def promptvcr_config():
            return {"cassette_library_dir": "x"}
        """
    )
    make_suite(pytester, test_app="def test_it(cassette):\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unknown option(s) cassette_library_dir in the promptvcr_config fixture*"])


# Record modes: command line, then marker, then environment, then replay ------------------------


@pytest.mark.parametrize(
    ("cli", "marker", "env", "expected"),
    [
        (None, None, None, "replay"),
        (None, None, "record", "record"),
        (None, "rewrite", "record", "rewrite"),
        ("passthrough", "rewrite", "record", "passthrough"),
        ("record", None, "rewrite", "record"),
    ],
    ids=["default", "env", "marker-over-env", "cli-over-all", "cli-over-env"],
)
def test_record_mode_precedence(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    cli: str | None,
    marker: str | None,
    env: str | None,
    expected: str,
) -> None:
    marker_args = f"(record_mode={marker!r})" if marker else ""
    make_suite(
        pytester,
        test_app=f"""
        import pytest

        @pytest.mark.promptvcr{marker_args}
        def test_mode(cassette):
            assert cassette.record_mode.value == {expected!r}
        """,
    )
    if env:
        monkeypatch.setenv("PROMPTVCR_RECORD_MODE", env)
    args = [f"--record-mode={cli}"] if cli else []
    run(pytester, *args).assert_outcomes(passed=1)


def test_bad_record_mode_names_where_it_was_set(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_suite(
        pytester,
        test_app="""
        import pytest

        @pytest.mark.promptvcr(record_mode="sometimes")
        def test_marker(cassette):
            pass

        def test_env(cassette):
            pass
        """,
    )
    monkeypatch.setenv("PROMPTVCR_RECORD_MODE", "often")
    result = run(pytester)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*Unknown record mode 'sometimes'*Set in the promptvcr marker of test_app.py::test_marker.",
            "*Unknown record mode 'often'*PROMPTVCR_RECORD_MODE*Set in the environment.",
        ],
        consecutive=False,
    )
    result = run(pytester, "--record-mode=bogus")
    result.stderr.fnmatch_lines(["*--record-mode: invalid choice: 'bogus'*"])


def test_record_then_replay_offline(pytester: pytest.Pytester) -> None:
    with FakeProvider() as fake:
        make_suite(
            pytester,
            test_app=f"""
            import pytest
            from llm import ask

            @pytest.mark.promptvcr
            def test_hello(cassette):
                answer = ask("hello", base_url="{fake.openai_base_url}")
                assert answer
                assert cassette.played[0].outcome == ("recorded" if cassette.record_mode.value == "record"
                                                      else "replayed")
            """,
        )
        recorded = run(pytester, "--record-mode=record")
        recorded.assert_outcomes(passed=1)
        assert len(fake.requests) == 1
    cassette = pytester.path / "cassettes/test_app/test_hello.yaml"
    assert "sk-test-key-for-replay" not in cassette.read_text()
    recorded.stdout.fnmatch_lines(
        ["requests: 0 replayed, 1 recorded, 0 missed", "tokens recorded: *, spent on this run"]
    )
    replayed = run(pytester)  # the server is gone: the answer comes from the file
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(["requests: 1 replayed, 0 recorded, 0 missed"])


# Default cassette names ---------------------------------------------------------------------


def test_default_names_for_classes_parametrized_ids_and_long_names(pytester: pytest.Pytester) -> None:
    make_suite(
        pytester,
        test_names="""
        import pathlib
        import pytest

        HERE = pathlib.Path(__file__).parent

        def note(cassette):
            with (HERE / "paths.txt").open("a") as out:
                out.write(cassette.path.relative_to(HERE).as_posix() + "\\n")

        def test_plain(cassette):
            note(cassette)

        class TestGroup:
            def test_in_class(self, cassette):
                note(cassette)

            class TestInner:
                def test_nested(self, cassette):
                    note(cassette)

        @pytest.mark.parametrize("city", ["Paris", "New York/NY", "Zürich"])
        def test_city(cassette, city):
            note(cassette)

        @pytest.mark.parametrize("text", ["a", "b"], ids=["x" * 200, "x" * 199 + "y"])
        def test_long(cassette, text):
            note(cassette)
        """,
    )
    run(pytester).assert_outcomes(passed=8)
    paths = (pytester.path / "paths.txt").read_text().splitlines()
    assert paths[:6] == [
        "cassettes/test_names/test_plain.yaml",
        "cassettes/test_names/TestGroup.test_in_class.yaml",
        "cassettes/test_names/TestGroup.TestInner.test_nested.yaml",
        "cassettes/test_names/test_city[Paris].yaml",
        "cassettes/test_names/test_city[New-York-NY].yaml",
        "cassettes/test_names/test_city[Z-xfcrich].yaml",  # pytest escapes the id to Z\xfcrich
    ]
    long_names = [Path(path).stem for path in paths[6:]]
    assert all(len(name) == MAX_NAME_LENGTH and name.startswith("test_long[xxxx") for name in long_names)
    assert long_names[0] != long_names[1]  # same first 100 characters, different files


def test_cassette_file_names_are_safe_and_capped() -> None:
    assert cassette_file_name("test_a[../../etc/passwd]") == "test_a[..-..-etc-passwd]"
    assert cassette_file_name("test_q[what? *yes*]", ["TestX"]) == "TestX.test_q[what-yes-]"
    assert cassette_file_name("..") == "test"
    capped = cassette_file_name("test_" + "a" * 500)
    assert len(capped) == MAX_NAME_LENGTH
    assert capped == cassette_file_name("test_" + "a" * 500)  # stable from run to run
    assert capped != cassette_file_name("test_" + "a" * 499)


def test_cassette_dir_option_beats_the_configured_one(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def promptvcr_config():
            return {"cassette_dir": "from-config"}
        """
    )
    make_suite(
        pytester,
        test_app="""
        def test_where(cassette):
            print("CASSETTE", cassette.path)
        """,
    )
    result = run(pytester, "-s")
    result.stdout.fnmatch_lines([f"*CASSETTE {pytester.path}/from-config/test_app/test_where.yaml"])
    result = run(pytester, "-s", "--cassette-dir=elsewhere")
    result.stdout.fnmatch_lines([f"*CASSETTE {pytester.path}/elsewhere/test_app/test_where.yaml"])


# What a failure says ------------------------------------------------------------------------


def test_a_miss_fails_with_its_message_and_the_frames_of_the_code_not_the_sdk(
    pytester: pytest.Pytester,
) -> None:
    make_suite(
        pytester,
        test_app="""
        import pytest
        from llm import ask

        @pytest.mark.promptvcr
        def test_hello():
            ask("something never recorded")
        """,
    )
    write_cassette(pytester.path / "cassettes/test_app/test_hello.yaml", chat("hello", "Hi!"))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_hello _*",
            "promptvcr: no recorded request in */cassettes/test_app/test_hello.yaml matches this one*",
            "  request: POST http://127.0.0.1:9/v1/chat/completions",
            "Nearest recorded request: interactions[0] POST https://api.openai.com/v1/chat/completions",
            "  differs at (recorded -> sent):",
            '    messages[0].content: "hello" -> "something never recorded"',
            "To record it, run again with PROMPTVCR_RECORD_MODE=record (pytest: --record-mode=record).",
            "Sent from:",
            '  test_app.py:6 in test_hello: ask("something never recorded")',
            "  llm.py:5 in ask: reply = client.chat.completions.create(",
            "*short test summary info*",
        ]
    )
    output = result.stdout.str()
    assert "_base_client" not in output and "httpx" not in output and "Traceback" not in output


def test_a_recording_that_holds_a_credential_of_the_environment_fails_and_does_not_print_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gateway token has no shape the record path knows; the run's environment knows its value."""
    secret = "gw-tok-THIS-IS-A-GATEWAY-TOKEN-0123456789"
    shaped = "sk-" + "A1b2C3d4" * 5  # an OpenAI-style key: the record path refuses to write it
    monkeypatch.setenv("GATEWAY_TOKEN", secret)
    with FakeProvider() as fake:
        make_suite(
            pytester,
            test_app=f"""
            import os
            import pytest
            from llm import ask

            @pytest.mark.promptvcr
            def test_leaky():
                ask("my token is " + os.environ["GATEWAY_TOKEN"], base_url="{fake.openai_base_url}")

            @pytest.mark.promptvcr
            def test_shaped():
                ask("my key is {shaped}", base_url="{fake.openai_base_url}")

            @pytest.mark.promptvcr
            def test_clean():
                ask("hello", base_url="{fake.openai_base_url}")
            """,
        )
        result = run(pytester, "--record-mode=record")
    result.assert_outcomes(passed=3, errors=2)
    # Issue 16: the environment's credentials are looked for before the write, so the
    # leaky interaction is refused instead of written and then reported.
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_leaky*",
            "*refusing to write 1 of 1 interaction(s) recorded into *test_leaky.yaml: the REQUEST*",
            "*recorded?0?.request.json.messages?0?.content: the value of $GATEWAY_TOKEN*",
        ]
    )
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_shaped*", "*refusing to write 1 of 1*"])
    assert not (pytester.path / "cassettes/test_app/test_leaky.yaml").exists()
    assert not (pytester.path / "cassettes/test_app/test_shaped.yaml").exists()
    assert (pytester.path / "cassettes/test_app/test_clean.yaml").exists()
    output = result.stdout.str()
    assert secret not in output and shaped not in output


def test_a_module_with_a_cassette_fixture_of_its_own_keeps_it(pytester: pytest.Pytester) -> None:
    make_suite(
        pytester,
        test_app="""
        import openai
        import pytest
        from llm import ask

        @pytest.fixture
        def cassette():
            return "the module's own"

        def test_own_fixture(cassette):
            assert cassette == "the module's own"
            with pytest.raises(openai.APIConnectionError):
                ask("hello")  # no promptvcr cassette is active

        @pytest.mark.promptvcr
        def test_marker_still_works(cassette):
            assert cassette == "the module's own"
            assert ask("hello") == "Hi!"
        """,
    )
    write_cassette(pytester.path / "cassettes/test_app/test_marker_still_works.yaml", chat("hello", "Hi!"))
    run(pytester).assert_outcomes(passed=2)


def test_a_miss_inside_a_task_group_still_fails_with_the_miss_message(pytester: pytest.Pytester) -> None:
    make_suite(
        pytester,
        test_app="""
        import asyncio
        import pytest
        from llm import ask

        @pytest.mark.promptvcr
        def test_group():
            async def main():
                async with asyncio.TaskGroup() as group:
                    group.create_task(asyncio.to_thread(ask, "never recorded"))

            asyncio.run(main())
        """,
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*_ test_group _*", "promptvcr: cassette */cassettes/test_app/test_group.yaml does not exist*"]
    )


def test_rewrite_keeps_the_old_cassette_when_the_test_fails(pytester: pytest.Pytester) -> None:
    with FakeProvider() as fake:
        make_suite(
            pytester,
            test_app=f"""
            import pytest
            from llm import ask

            @pytest.mark.promptvcr
            def test_fails():
                ask("hello", base_url="{fake.openai_base_url}")
                assert False, "the code under test broke"

            @pytest.mark.promptvcr
            def test_passes():
                ask("hello", base_url="{fake.openai_base_url}")
            """,
        )
        old = {
            name: write_cassette(
                pytester.path / f"cassettes/test_app/{name}.yaml", chat("old", "old")
            ).read_text()
            for name in ("test_fails", "test_passes")
        }
        run(pytester, "--record-mode=rewrite").assert_outcomes(failed=1, passed=1)
    assert (pytester.path / "cassettes/test_app/test_fails.yaml").read_text() == old["test_fails"]
    rewritten = (pytester.path / "cassettes/test_app/test_passes.yaml").read_text()
    assert rewritten != old["test_passes"] and "content: hello" in rewritten
