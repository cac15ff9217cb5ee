import time

from worker import Worker


def test_processes_submitted_jobs():
    results = []
    worker = Worker(lambda job: results.append(job.upper()))
    for job in ["a", "b", "c"]:
        worker.submit(job)
    time.sleep(0.01)  # give the worker thread time to catch up
    assert results == ["A", "B", "C"]


def test_close_stops_the_thread():
    worker = Worker(lambda job: None)
    worker.close()
    assert not worker._thread.is_alive()
