"""The calls the engine cannot cancel (sync Python tasks and checks): the threads
they run in, and the deadline of a check run inline.

A Python function called in a thread cannot be stopped. The engine bounds its
wait (``--timeout``), but a call that never returns (a check that loops, a
task blocked on a lock) keeps its thread. The standard library's
:class:`~concurrent.futures.ThreadPoolExecutor` then holds up the whole run:
its worker is busy for good, so with ``--concurrency 1`` no later call is
served, and the interpreter joins its workers at exit, so the run never exits,
SIGTERM and Ctrl-C included (the summary is written, the process stays).

:class:`DaemonPool` serves each call in a daemon thread that the interpreter
does not wait for, and starts a new thread whenever no idle one is there to
take a call, so a stuck call holds only its own thread.

A check that does not call a model runs inline, on the event loop's thread
(a thread hop per check would double a run's time), where a call that never
returns froze the run: no timeout, and SIGTERM not handled. An :class:`Alarm`
bounds it: on the main thread it arms ``SIGALRM`` for the call, whose handler
raises :class:`CallTimedOut` inside it (a ``time.sleep``, a loop, a blocking
read are all interrupted), and elsewhere (a run started from a running event
loop runs in a worker thread, where no signal arrives) it is not bounded.
"""

from __future__ import annotations

import contextlib
import math
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from typing import Any

__all__ = ["Alarm", "CallTimedOut", "DaemonPool"]


class DaemonPool(Executor):
    """An executor of daemon threads that a call that never returns cannot block.

    A thread is started whenever a call is submitted and no thread is idle,
    and finished threads wait for the next call; so as many threads run as
    calls are in flight, those stuck for good among them. ``shutdown`` lets
    the idle threads end and never waits for a busy one unless asked to.

    >>> pool = DaemonPool("demo")
    >>> pool.submit(pow, 2, 10).result()
    1024
    >>> pool.shutdown()
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # threads that will take a queued call without a new one
        self._threads: list[threading.Thread] = []
        self._shut = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._shut:
                raise RuntimeError("cannot schedule new calls after shutdown")
            self._calls.put((future, fn, args, kwargs))
            if self._idle:
                self._idle -= 1
            else:
                thread = threading.Thread(
                    target=self._serve,
                    name=f"{self._name}-{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(thread)
                thread.start()
        return future

    def _serve(self) -> None:
        while True:
            item = self._calls.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            del item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as error:  # the caller's to see, as a Future gives it
                    future.set_exception(error)
                    del error
                else:
                    future.set_result(result)
                    del result
            del future, fn, args, kwargs
            with self._lock:
                if self._shut:
                    return
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shut = True
            threads = list(self._threads)
        if cancel_futures:
            while True:
                try:
                    item = self._calls.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in threads:
            self._calls.put(None)  # each idle thread ends at it; a busy one at its next
        if wait:
            for thread in threads:
                thread.join()


class CallTimedOut(BaseException):
    """Raised inside a call that outlived its :class:`Alarm`: a ``BaseException``,
    so that the call's own ``except Exception`` does not take it for its error."""


class Alarm:
    """The deadline of the calls a run makes inline: ``SIGALRM`` after ``seconds``,
    armed around each call (:meth:`bounding`), its handler installed once for the
    run (:meth:`installed`), so that a call costs two ``setitimer`` calls.

    >>> import time
    >>> with Alarm.installed(0.05) as alarm:
    ...     try:
    ...         with alarm.bounding():
    ...             time.sleep(5)
    ...     except CallTimedOut:
    ...         print("stopped")
    stopped
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._armed = False

    @classmethod
    @contextlib.contextmanager
    def installed(cls, seconds: float | None) -> Iterator[Alarm | None]:
        """An alarm of ``seconds`` for the block, or None where none can be: off the
        main thread (where no signal arrives), where ``SIGALRM`` is someone else's
        (its handler not the default, or a timer running), or for no ``seconds``."""
        if (
            seconds is None
            or not math.isfinite(seconds)
            or seconds <= 0
            or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0
        ):
            yield None
            return
        alarm = cls(seconds)
        signal.signal(signal.SIGALRM, alarm._expire)
        try:
            yield alarm
        finally:
            alarm._armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)

    def _expire(self, signum: int, frame: Any) -> None:
        if self._armed:
            self._armed = False
            raise CallTimedOut(self.seconds)

    @contextlib.contextmanager
    def bounding(self) -> Iterator[None]:
        """Raise :class:`CallTimedOut` in the block when it outlives the alarm."""
        self._armed = True
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        try:
            yield
        finally:
            self._armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
