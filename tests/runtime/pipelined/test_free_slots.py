"""Free Spark slots before a pipelined stage starts (``coordinator.free_slots``), on a stand-in of Spark's status
tracker: no Spark."""

from __future__ import annotations

from types import SimpleNamespace

from dag.runtime.pipelined.coordinator import free_slots


class _Tracker:
    """Stages with their running tasks, and the jobs of each job group with their stages."""

    def __init__(self, stages: dict[int, int], groups: dict[str, dict[int, list[int]]]):
        self.stages, self.groups = stages, groups

    def getActiveStageIds(self):
        return [s for s, running in self.stages.items() if running]

    def getStageInfo(self, stage_id):
        return SimpleNamespace(numActiveTasks=self.stages.get(stage_id, 0))

    def getJobIdsForGroup(self, group):
        return list(self.groups.get(group, {}))

    def getJobInfo(self, job_id):
        stages = next((jobs[job_id] for jobs in self.groups.values() if job_id in jobs), None)
        return None if stages is None else SimpleNamespace(stageIds=stages)


def _spark(stages, groups, slots=4):
    tracker = _Tracker(stages, groups)
    return SimpleNamespace(defaultParallelism=slots, statusTracker=lambda: tracker)


def test_free_slots_when_tasks_of_any_job_run_then_they_are_busy():
    sc = _spark({1: 2, 2: 1}, {"jetspark-1": {10: [1]}, "other": {11: [2]}})
    assert free_slots(sc) == 1


def test_free_slots_when_the_restarting_jobs_own_stage_still_shows_then_its_tasks_count_as_free():
    # the job's previous stage ended, but Spark's status still shows its two tasks: a restart must not wait for
    # them (nor be refused), while another job's task still holds its slot
    sc = _spark({1: 2, 2: 1}, {"jetspark-1": {10: [1]}, "other": {11: [2]}})
    assert free_slots(sc, own_group="jetspark-1") == 3
    assert free_slots(sc, own_group="jetspark-9") == 1  # a group with no job frees nothing
