"""train.py's process groups for a topology's schedule, with torch.distributed's group
constructors replaced by recorders: with gloo's default threads every rank creates every
group in the schedule's order (torch.distributed.new_group requires it); with one thread a
rank builds only its own, in the same order; each step gives the rank its group and size.
Skipped without PyTorch."""

import importlib.util
import unittest
from unittest import mock

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import train

# alternating-exp-ring on 4 nodes of 1 rank (dtperf topologies --gpus 4 --gpus-per-node 1
# --schedule --json): one pair mixes across nodes per step, the others are alone.
AER_4X1 = [{"mixing": "group_average", "rounds": [[[0], [1], [2, 3]]]},
           {"mixing": "group_average", "rounds": [[[0, 1], [2], [3]]]},
           {"mixing": "group_average", "rounds": [[[0], [2], [1, 3]]]},
           {"mixing": "group_average", "rounds": [[[0, 2], [1], [3]]]}]


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
class StepGroupsTest(unittest.TestCase):
    def groups(self, rank, threads):
        created = []

        def new_group(members):
            created.append(("all", tuple(members)))
            return f"group{members}"

        def in_order_group(members, me, n):
            self.assertIn(me, members)
            created.append((n, tuple(members)))
            return f"in-order{members}"

        with mock.patch.object(train.dist, "new_group", new_group), \
                mock.patch.object(train, "in_order_group", in_order_group):
            return train.step_groups(AER_4X1, rank, threads), created

    def test_default_threads_create_every_group_on_every_rank(self):
        steps, created = self.groups(rank=1, threads=train.GLOO_DEFAULT_THREADS)
        # 8 distinct groups in order of first appearance: [0] [1] [2,3] [0,1] [2] [3] [1,3] [0,2].
        self.assertEqual([m for _, m in created], [(0,), (1,), (2, 3), (0, 1), (2,), (3,), (1, 3), (0, 2)])
        self.assertEqual(steps, [("group[1]", 1), ("group[0, 1]", 2), ("group[1, 3]", 2), ("group[1]", 1)])

    def test_one_thread_builds_only_the_ranks_own_groups(self):
        steps, created = self.groups(rank=1, threads=1)
        # Rank 1 is in [1] (steps 0 and 3), [0,1] (step 1) and [1,3] (step 2): three groups, each once.
        self.assertEqual(created, [(1, (1,)), (1, (0, 1)), (1, (1, 3))])
        self.assertEqual(steps, [("in-order[1]", 1), ("in-order[0, 1]", 2), ("in-order[1, 3]", 2), ("in-order[1]", 1)])

    def test_a_schedule_of_several_rounds_is_refused(self):
        schedule = [{"mixing": "group_average", "rounds": [[[0, 1], [2, 3]], [[0, 2], [1, 3]]]}]
        with self.assertRaises(SystemExit):
            train.step_groups(schedule, 0, 1)


if __name__ == "__main__":
    unittest.main()
