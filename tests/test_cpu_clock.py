"""The CPU clock the time-bounded tests use: it counts work, not waiting, so load cannot break a bound."""
from __future__ import annotations

import subprocess
import sys
import time


def test_waiting_costs_nothing_and_work_counts_wherever_it_runs(cpu_clock):
    with cpu_clock() as idle:
        time.sleep(0.5)  # wall time passes (as it does when other jobs take the cores); no CPU is used
    assert idle.seconds < 0.1, idle.seconds
    with cpu_clock() as busy:
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass
    assert 0.15 < busy.seconds < 2.0, busy.seconds
    # A worker process's CPU counts too, whether it is still running at the end or already reaped.
    burn = "import time\nend = time.process_time() + 0.2\nwhile time.process_time() < end: pass\n"
    with cpu_clock() as child:
        subprocess.run([sys.executable, "-c", burn], check=True)
    assert child.seconds > 0.15, child.seconds
    with cpu_clock() as live:
        worker = subprocess.Popen([sys.executable, "-c", burn + "time.sleep(30)\n"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.05)
            try:
                import psutil

                used = psutil.Process(worker.pid).cpu_times()
                if used.user + used.system > 0.18:  # it has done its work and sleeps, still running
                    break
            except psutil.Error:
                break
    worker.kill()
    worker.wait()
    assert live.seconds > 0.15, live.seconds
