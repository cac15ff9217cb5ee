"""A background worker: runs handler(job) for each submitted job, in submission order."""

import queue
import threading

_STOP = object()


class Worker:
    def __init__(self, handler):
        self._handler = handler
        self._jobs: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="worker", daemon=True)
        self._thread.start()

    def submit(self, job) -> None:
        self._jobs.put(job)

    def close(self) -> None:
        """Stop after the jobs already submitted have been handled."""
        self._jobs.put(_STOP)
        self._thread.join()

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is _STOP:
                    return
                self._handler(job)
            finally:
                self._jobs.task_done()
