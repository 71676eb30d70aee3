"""``use_cassette``: one object that is a context manager (sync and async) and a decorator.

Entering loads the cassette file (:mod:`.files.persister`) and routes every HTTP
request of the supported clients to it (:mod:`.activation`); each request is then decided
here, by the record mode: replayed from the :class:`~.matching.tape.Tape`, recorded, or let
through. Exiting restores the clients and, in the recording modes, writes the file once,
atomically. When the body raised, exit stays quiet so that the real error is what shows.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from functools import partial
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from . import activation
from .cassettes.models import Interaction, Play, Request, Response
from .cassettes.playback import Pace, pace_factor, untimed_message
from .credentials.headers import REQUEST_HEADERS, RESPONSE_HEADERS
from .errors import CassetteMiss, CassetteWriteError
from .files import persister, saving
from .identity import IdentityOptions, identity_options
from .interceptors.decision import PASS_THROUGH, Decision, Record, Replay
from .longjobs import JobReplay
from .matching import protocols
from .matching.background import DEFAULT_IGNORE_HOSTS, DEFAULT_PASSTHROUGH_HOSTS, BackgroundHosts, Treatment
from .matching.key import request_key
from .matching.machine import Machine
from .matching.parts import Rule
from .matching.rules import default_rules
from .matching.tape import Tape, fuzzy_threshold
from .policies import budget, staleness, unwritten, verifying
from .policies.modes import RecordMode, check_ci, resolve_record_mode
from .policies.tooldrift import OnToolDrift, resolve_on_tool_drift
from .recordings import ResponseRecording

if TYPE_CHECKING:
    from .faults.plan import FaultFired, FaultPlan
    from .faults.spec import Fault
    from .scripted.scripts import Script

__all__ = ["Cassette", "use_cassette"]


class Cassette(activation.Block):
    """Replay (or record) the HTTP traffic of a block, a function or a test from ``path``.

    ``record_mode`` defaults to ``$PROMPTVCR_RECORD_MODE``, else ``replay``. A path ending in
    ``.json`` is written as JSON, any other as YAML. ``rules`` decide what makes two requests
    the same (default: :func:`~promptvcr.default_rules`, :data:`DEFAULT_RULES` unless changed
    with :func:`~promptvcr.set_default_rules`). ``fuzzy`` (off; ``True`` for a similarity of 0.8,
    or a threshold from 0 to 1) replays, with a :class:`FuzzyMatchWarning` listing the diff, a
    recorded request that differs from a missing one only in message text that similar.
    ``on_tool_drift="replay"`` replays a request that differs only in what its tools returned
    (played as ``tool-drift``, see :mod:`.policies.tooldrift`); the default ``"miss"`` misses.
    Requests to ``ignore_hosts`` (telemetry exporters by default) get an empty local ``204``;
    those to ``passthrough_hosts`` (OAuth token endpoints by default) go to the network,
    unrecorded; both in every mode, listed in ``background_hosts``; ``()`` makes them ordinary.
    ``timing`` paces replay: ``"none"`` (as fast as possible; a server's declared waits served
    as none), ``"fast"`` (that, and the code's sleeps between polls of a replayed long job
    skipped: docs/long-jobs.md), ``"recorded"`` (the recorded time to headers and between
    events, on the real clock) or a speed factor (``0.1`` is ten times faster). ``faults``
    inject provider failures (:mod:`promptvcr.faults`); ``faults_fired`` lists those that fired.

    ``played`` lists every request sent while the cassette was active, in order, with its
    outcome (``replayed``, ``recorded``, ``passthrough``), for a test to assert on the calls its
    code made; ``missed`` the requests that raised :class:`CassetteMiss`, even those the code
    swallowed: a block that returned normally after a miss raises it again as it exits. A
    cassette serves the code that entered it and the tasks and threads started from it with
    the context copied; a nested one hides the outer one (see :mod:`.activation`).

    What is written (:class:`.files.persister.Writing`): ``request_headers`` and
    ``response_headers`` (credentials never are); ``allowed_secrets``, values shaped like a
    secret this cassette may hold as they are; ``before_record_request`` /
    ``before_record_response``, vcrpy's hooks, edit or drop what is written. Keeping cassettes
    honest (:mod:`promptvcr.policies`): ``drift`` lists what ``RecordMode.verify`` found;
    ``max_age`` (``"30d"``, a timedelta) and ``on_stale`` (``warn``, ``fail``, ``rewrite``) act
    on old recordings; ``on_record_error="keep"`` writes a 429, 5xx or timeout received while
    recording, which the default ``"skip"`` leaves out. On CI, see :func:`.policies.modes.check_ci`.
    ``identity`` (on): the recording machine's paths, user and host names are written as ``<home>``,
    ``<user>``... and replayed as this machine's (:mod:`.identity`; docs/portability.md).
    """

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        record_mode: RecordMode | str | None = None,
        allow_playback_repeats: bool = False,
        rules: Sequence[Rule] | None = None,
        fuzzy: bool | float = False,
        on_tool_drift: OnToolDrift | None = None,
        request_headers: Iterable[str] = REQUEST_HEADERS,
        response_headers: Iterable[str] = RESPONSE_HEADERS,
        ignore_hosts: Iterable[str] = DEFAULT_IGNORE_HOSTS,
        passthrough_hosts: Iterable[str] = DEFAULT_PASSTHROUGH_HOSTS,
        timing: Pace = "none",
        faults: Sequence[Fault] = (),
        allowed_secrets: Iterable[str] = (),
        script: Script | None = None,
        max_age: str | timedelta | None = None,
        on_stale: Literal["warn", "fail", "rewrite"] | None = None,
        on_record_error: Literal["skip", "keep"] = "skip",
        before_record_request: Callable[[Request], Request | None] | None = None,
        before_record_response: Callable[[Response], Response | None] | None = None,
        identity: bool | Mapping[str, str] | IdentityOptions = True,
    ) -> None:
        # The arguments as given (before any other local): each decorated call gets a fresh copy.
        self._options = {name: value for name, value in locals().items() if name not in ("self", "path")}
        self.background = BackgroundHosts(ignore_hosts, passthrough_hosts)
        self.timing = timing
        self._pace = pace_factor(timing)
        self._jobs = JobReplay(keep_waits=self._pace is not None, fast=timing == "fast")  # see .longjobs
        self.faults = tuple(faults)
        self._fault_plan: FaultPlan | None = None
        self.path = path if isinstance(path, Path) else Path(path)
        self._requested_mode = record_mode
        self.record_mode = RecordMode.REPLAY
        self.allow_playback_repeats = allow_playback_repeats
        self.rules = tuple(rules) if rules is not None else default_rules()
        self.fuzzy = fuzzy_threshold(fuzzy)
        self.on_tool_drift = resolve_on_tool_drift(on_tool_drift)
        headers = persister.header_names(request_headers), persister.header_names(response_headers)
        hooks = before_record_request, before_record_response
        mine = identity_options(identity)  # the machine's values as placeholders (promptvcr.identity)
        self.writing = persister.Writing(*headers, frozenset(allowed_secrets), *hooks, mine)  # written
        self.script = script  # answers what the file does not hold: see promptvcr.scripted.scripts
        self.max_age = staleness.parse_max_age(max_age)
        self.on_stale = on_stale if on_stale is None else staleness.resolve_on_stale(on_stale)
        self.on_record_error = unwritten.check_on_record_error(on_record_error)
        self._clear_run()
        self._tape = Tape(rules=self.rules)
        self._keyless = False  # see __enter__: _recorded is then the whole tape
        self._lane = False  # see __enter__: a request found on the tape is then simply replayed
        self._lock = threading.Lock()
        self._active = False
        self._machine = Machine(None)

    def _clear_run(self) -> None:
        """What one use of the cassette gathers, none yet: when it is made and each time it is entered."""
        self.played: list[Play] = []
        self.missed: list[Request] = []
        self._misses: list[CassetteMiss] = []  # every miss raised for it, also those the code caught
        self.faults_fired: list[FaultFired] = []
        #: Background hosts the code under test sent to, each with ``"ignored"`` or ``"passthrough"``.
        self.background_hosts: dict[str, str] = {}
        #: What ``RecordMode.verify`` found: each live answer whose structure changed.
        self.drift: list[verifying.Drift] = []
        self._recorded: list[Interaction] = []
        #: Sent to record, response not complete yet; with what records it as far as it arrived.
        self._unfinished: dict[int, tuple[Request, Callable[[], None] | None]] = {}
        self._saver: saving.Saver | None = None  # writes each recording as it completes
        self._loaded = persister.Loaded([], exists=False)

    def __repr__(self) -> str:
        return f"<Cassette {self.path} mode={self.record_mode.value} played={len(self.played)}>"

    # What the cassette holds and what was played -------------------------------------------

    @property
    def interactions(self) -> list[Interaction]:
        """Every interaction the cassette holds now: loaded from the file, then recorded."""
        return list(self._recorded if self._keyless else self._tape.interactions)

    @property
    def requests(self) -> list[Request]:
        return [play.request for play in self.played]

    @property
    def unplayed(self) -> list[Interaction]:
        """Interactions in the cassette that no request played (stale recordings)."""
        return self._tape.unplayed

    @property
    def all_played(self) -> bool:
        return not self.unplayed

    # The path of each request --------------------------------------------------------------

    def handle(self, request: Request) -> Decision:
        """Decide one request, in named steps: a background host is set aside, a declared fault
        may fire; then key the request, find it on the tape, apply the run's policies (verify,
        the budget) and answer, or, found nowhere, record or miss (see ``RecordMode``)."""
        background = self.background.treatment(request.url)
        seen = self._machine.seen(request)  # this machine's paths and names as the recording holds them
        if self._lane and background is None:  # the usual request of a test: sent as recorded (issue 22)
            with self._lock:
                found = self._tape.play_sent(seen, allow_repeats=self.allow_playback_repeats)
                if found is not None:
                    return self._replayed(request, found)
        if background is not None:
            return self._set_aside(request, *background)
        fired = None
        if (plan := self._fault_plan) is not None:
            with self._lock:
                fired, faulted = plan.decide(request)
            if faulted is not None:
                return Replay(faulted)
        if self.record_mode is RecordMode.PASSTHROUGH:
            with self._lock:
                self.played.append(Play(request, "passthrough"))
            return PASS_THROUGH
        with self._lock:
            key = "" if self._keyless else request_key(seen, self.rules)
            on_tape = self._find(seen, key, fired)
            if on_tape is None and seen is not request:  # recorded with the values as they were
                on_tape = self._find(request, request_key(request, self.rules), fired)
            if on_tape is None:
                return self._not_found(request, key, fired)
            if isinstance(on_tape, Replay):  # a fault broke the recorded answer
                return on_tape
            if self.record_mode is RecordMode.VERIFY:  # the run's policy: sent live, compared
                budget.admit(self.path, request, self.missed, self._misses)
                return Record(verifying.Verifier(self._add_verified, request, on_tape))
            return self._replayed(request, on_tape)

    def _set_aside(self, request: Request, host: str, treatment: Treatment) -> Decision:
        """A background host's request (telemetry, OAuth): answered empty, or let through."""
        with self._lock:
            self.background_hosts.setdefault(host, treatment)
            self.played.append(Play(request, treatment))
        return Replay(self.background.answer()) if treatment == "ignored" else PASS_THROUGH

    def _find(self, request: Request, key: str, fired: FaultFired | None) -> Interaction | Replay | None:
        """Under the lock: the recording on the tape that answers ``request``; a fault that breaks
        it borrows it without using it up (the retry gets it) and answers instead."""
        mode, repeats, plan = self.record_mode, self.allow_playback_repeats, self._fault_plan
        if not mode.reads_cassette or self._keyless:
            return None
        if fired is not None and plan:  # borrowed, not used up: the retry gets the recording
            broken = plan.break_recorded(fired, self._tape.peek(key, allow_repeats=repeats), self._pace)
            if broken:
                return Replay(broken)
        fuzzy = self.fuzzy if mode is RecordMode.REPLAY else 0.0
        return self._tape.find(request, key, allow_repeats=repeats, fuzzy=fuzzy, path=self.path)

    def _not_found(self, request: Request, key: str, fired: FaultFired | None) -> Decision:
        """Under the lock: nothing recorded answers: the script, else a miss (replay), a live call
        reported as drift (verify checks the provider, not the code), or a recording."""
        if self.script is not None and (answer := self.script.answer(request, self, fired)) is not None:
            return Replay(answer)
        if self.record_mode is RecordMode.REPLAY:
            if self.on_tool_drift == "replay" and (drifted := self._tape.play_drifted(request)) is not None:
                return self._replayed(request, *drifted)
            self.missed.append(request)
            self._misses.append(error := self._miss(request, key))
            raise error
        if self.record_mode is RecordMode.VERIFY:
            self.drift.append(verifying.not_recorded(self.path, request))
            self.played.append(Play(request, "passthrough"))
            return PASS_THROUGH
        budget.admit(self.path, request, self.missed, self._misses)
        return Record(ResponseRecording(self, request, key))

    def _replayed(self, request: Request, interaction: Interaction, drift: tuple[str, ...] = ()) -> Replay:
        """Under the lock: ``interaction`` answers ``request`` (kept in ``played`` with the recorded
        bytes when it sent the same). A protocol that ties the answer to the live request (JSON-RPC
        ids) makes it anew (:mod:`.matching.protocols`)."""
        response, was = self._machine.answer(interaction, interaction.response), None
        if request.content == (recorded := interaction.request.content):
            request.content = recorded
        elif (answer := protocols.answer_for(request, interaction)) is not None:
            response, was = answer, interaction.request  # an answer on another stream (MCP's GET) finds it
        self.played.append(Play(request, "tool-drift" if drift else "replayed", response, was, drift))
        response = self._jobs.served(request, response)  # a job's waits and state
        if self._pace is None and request.method != "GET" and not response.websocket:
            return Replay(response)
        return Replay(response.served(self._pace, self.played, request.method), self)  # self: misses

    def _add_recorded(self, request: Request, key: str, response: Response) -> None:
        interaction = Interaction(request, response, datetime.now(timezone.utc))
        with self._lock:
            self._unfinished.pop(id(request), None)
            if self.on_record_error == "skip" and unwritten.skipped(self.path, request, response):
                self.played.append(Play(request, "passthrough", response))
                return
            if not self._keyless:
                self._tape.append(key, interaction)
            self._recorded.append(interaction)
            self.played.append(Play(request, "recorded", response))
        if self._saver is not None:
            self._saver.recorded(interaction)  # on disk now: a kill loses at most what is in flight

    def _add_verified(self, request: Request, interaction: Interaction, live: Response) -> None:
        with self._lock:
            position = self._tape.position_of(interaction)
            if (drift := verifying.drift_of(self.path, interaction, live, position)) is not None:
                self.drift.append(drift)
            self.played.append(Play(request, "verified", live))

    def _miss(self, request: Request, key: str) -> CassetteMiss:
        from .matching.diagnose import miss_message  # with difflib: built only on a miss

        tape, path, exists = self._tape, self.path, self._loaded.exists
        message = miss_message(path=path, request=request, interactions=tape.interactions, rules=self.rules,
                               file_exists=exists, times_recorded=tape.times_recorded(key))  # fmt: skip
        message = message if self.script is None else self.script.ran_out(request, message, self)
        return CassetteMiss(message, cassette=self.path)

    # Entering and leaving -----------------------------------------------------------------

    def __enter__(self) -> Cassette:
        if self._active:
            raise RuntimeError(
                f"Cassette {self.path} is already in use; a use_cassette object does not nest in itself."
            )
        self.record_mode = resolve_record_mode(self._requested_mode, self.path)
        check_ci(self.record_mode, self.path)
        self._clear_run()
        self._fault_plan = None
        if self.faults:  # made with promptvcr.faults: imported by the user, not by every cassette
            from .faults.plan import FaultPlan

            self._fault_plan = FaultPlan(self.faults, self.played, self.faults_fired)
        if self.record_mode.reads_cassette or self.record_mode is RecordMode.REWRITE:
            # rewrite reads too: a corrupt file must stop the run rather than be replaced silently.
            self._loaded = persister.load(self.path, appending=self.record_mode is RecordMode.RECORD)
        self.record_mode = staleness.mode_after(
            self.record_mode, self.path, self._loaded, self.max_age, self.on_stale
        )
        interactions = self._loaded.interactions if self.record_mode.reads_cassette else []
        self._tape = Tape(interactions, rules=self.rules)
        self._machine = Machine(self.writing.identity, interactions)  # this machine's values, read now
        # Recording onto nothing, without repeats: no lookup can find anything, so no key (issue 22).
        self._keyless = not (interactions or self.allow_playback_repeats) and self.record_mode.writes_cassette
        # Nothing to weigh for a request the tape holds: no fault, no pacing, not verify (issue 22).
        self._lane = (
            self.record_mode.replays and not self._keyless and self._fault_plan is None and self._pace is None
        )
        if self.record_mode.writes_cassette:
            rewrite, key = self.record_mode is RecordMode.REWRITE, partial(request_key, rules=self.rules)
            self._saver = saving.Saver(self.path, self.writing, self._loaded, rewrite=rewrite, key=key)
            persister.prepare_to_write(self.path)
        if self._pace is not None and any(i.response.timing is None for i in interactions):
            warnings.warn(untimed_message(self.path, self.timing), RuntimeWarning, stacklevel=2)
        activation.activate(self)
        self._jobs.start(replaying=not self.record_mode.writes_cassette)
        self._active = True
        return self

    def note_miss(self, request: Request, error: CassetteMiss) -> None:
        """A miss raised for this cassette by :mod:`.activation` (a request no cassette could
        claim), remembered like its own so that exit raises it if the code caught it."""
        with self._lock:
            self._misses.append(error)

    def __exit__(
        self, exc_type: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        body_raised = exc_type is not None
        self._active = False
        activation.deactivate(self)
        self._jobs.stop()
        unwritten.record_abandoned(self._unfinished)  # as far as they arrived, ``end: closed``
        if not body_raised:  # the real error is what shows
            unwritten.warn_unfinished(self.path, (request for request, _ in self._unfinished.values()))
            verifying.warn_drift(self.path, self.drift)
        failed = body_raised or bool(self._misses)  # a caught miss fails the block too
        try:  # what was recorded is on disk already (files.saving); a failed rewrite keeps it aside
            if self._saver is not None:
                self._saver.finish(failed)
        except CassetteWriteError as write_error:
            if not failed:
                raise
            warnings.warn(str(write_error), RuntimeWarning, stacklevel=2)
        CassetteMiss.raise_at_exit(error, self._misses, self.path)

    @property
    def saved(self) -> saving.Saved:
        """What the last use wrote, and what a failed rewrite kept aside (:class:`~.saving.Saved`)."""
        return saving.Saved() if self._saver is None else self._saver.saved

    def _fresh(self) -> Cassette:
        """A new cassette with the same settings, for each call of a decorated function."""
        return Cassette(self.path, **self._options)


#: ``use_cassette(path, **options)``: the :class:`Cassette` class itself, so that its
#: signature and its documentation are written once.
use_cassette = Cassette
