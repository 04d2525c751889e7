"""The integration tests' world of 2 CPUs (tests/support/apshim_test.py, claim_cpu_pair): on a
machine of 8 CPUs (a mask given to the function: this machine may have 2), concurrent tests get
disjoint pairs while pairs are free, then second slots, then a shared pair; a slot is free again
once its holder lets go; a mask of 2 CPUs or fewer is kept whole; on SMT machines a pair is two
cores, not two siblings of one, wherever sysfs numbers them. Flock locks belong to an open file,
so one process holding several stands for several tests.
Also: this test itself runs in a world of at most 2 CPUs.
Usage: test_cpu_pairs.py"""
import os
import tempfile

from apshim_test import TEST_CPUS, Check, claim_cpu_pair, cores_first, usable_cpus

check = Check("harness.cpu_pairs")
check.expect(1 <= usable_cpus() <= TEST_CPUS, f"this test runs on at most {TEST_CPUS} CPUs ({usable_cpus()})")


def own_core(cpu):  # no SMT: every CPU a core of its own
    return str(cpu)


def claim(mask, lock_dir):
    return claim_cpu_pair(mask, lock_dir, own_core)


with tempfile.TemporaryDirectory(prefix="apshim-cpu-pairs-") as locks:
    eight = [7, 6, 5, 4, 3, 2, 1, 0]  # the order a mask comes in does not matter
    held = [claim(eight, locks) for _ in range(4)]
    pairs = [cpus for cpus, _ in held]
    check.expect(pairs == [[0, 1], [2, 3], [4, 5], [6, 7]], f"four tests get the four pairs ({pairs})")
    check.expect(all(lock is not None for _, lock in held), "each holds its pair's lock")

    more = [claim(eight, locks) for _ in range(4)]
    check.expect([cpus for cpus, _ in more] == pairs, f"four more get each pair's second slot ({[c for c, _ in more]})")
    held += more

    cpus, lock = claim(eight, locks)
    check.expect(lock is None and cpus in pairs, f"with every slot held, a ninth shares a pair unlocked ({cpus})")

    held[2][1].close()  # the test on 4,5 ends
    cpus, lock = claim(eight, locks)
    check.expect(cpus == [4, 5] and lock is not None, f"its slot is taken by the next test ({cpus})")

    odd = claim([0, 1, 2], os.path.join(locks, "odd"))[0]
    check.expect(odd == [0, 1], f"of 3 CPUs, one pair (the third CPU is left out) ({odd})")
    for mask in ([3], [2, 5]):
        cpus, lock = claim(mask, os.path.join(locks, "small"))
        check.expect(cpus == mask and lock is None, f"a mask of {len(mask)} is kept whole, no lock ({cpus})")
    check.expect(not os.path.exists(os.path.join(locks, "small")), "and no lock directory is made for it")

    blocked = os.path.join(locks, "a-file")  # a lock directory that cannot be made
    open(blocked, "w").close()
    cpus, lock = claim(eight, os.path.join(blocked, "locks"))
    check.expect(lock is None and cpus in pairs, f"without a lock directory, a pair shared unlocked ({cpus})")

# SMT numbered as Linux does on most x86 (CPU k and k + 4 one core) and as some hosts do
# (CPUs 2k and 2k + 1 one core): pairs are two cores either way while cores are left.
split = cores_first(eight, lambda cpu: str(cpu % 4))
check.expect(split == [0, 1, 2, 3, 4, 5, 6, 7], f"siblings k, k + 4: order kept ({split})")
adjacent = cores_first(eight, lambda cpu: str(cpu // 2))
check.expect(adjacent == [0, 2, 4, 6, 1, 3, 5, 7], f"siblings 2k, 2k + 1: one thread a core first ({adjacent})")
with tempfile.TemporaryDirectory(prefix="apshim-cpu-pairs-smt-") as locks:
    held = [claim_cpu_pair(eight, locks, lambda cpu: str(cpu // 2)) for _ in range(4)]
    pairs = [cpus for cpus, _ in held]
    check.expect(pairs == [[0, 2], [4, 6], [1, 3], [5, 7]], f"adjacent siblings: every pair two cores ({pairs})")
two_cores = cores_first([0, 1, 2, 3], lambda cpu: str(cpu // 2))[:TEST_CPUS]
check.expect(two_cores == [0, 2], f"of two cores' four siblings, one pair of both cores ({two_cores})")
check.expect(cores_first([5, 3], lambda cpu: "one") == [3, 5], "one core's siblings: kept, in order")

check.done()
