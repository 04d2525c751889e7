#include "gat/table.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "gat/dp.hpp"
#include "gat/names.hpp"
#include "gat/proc.hpp"
#include "shim/log.hpp"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

namespace apshim::gat {
namespace {

// A live process whose controller has not updated for this long is away: stopped (Ctrl-Z,
// SIGSTOP from a gang-scheduling batch system, a debugger), frozen, or its controller starved.
// It keeps its row but holds no processor until it updates again: DP leaves it out and shares
// its processors among the jobs that run (with desire 1, as before, it kept one of them: on 2
// CPUs beside a stopped job, a job ran on one CPU with the other idle). Back, its first update
// takes its share as an arrival would; until then its threads keep their old CPUs for at most
// that cycle. A table whose est_cycle is longer (APSHIM_EST_CYCLE_MS up to 10 s) allows three
// of its cycles: every job updates once a cycle.
constexpr std::uint64_t kStaleHeartbeatNs = 1000000000ull;

// Whether `r` (another process's live row) is away at `now` (above), in a table of that est_cycle.
bool away(const Row& r, pid_t me, std::uint64_t now, std::uint32_t est_cycle_us) {
    std::uint64_t beat = __atomic_load_n(&r.heartbeat_ns, __ATOMIC_RELAXED);
    std::uint64_t silence = std::max<std::uint64_t>(kStaleHeartbeatNs, 3ull * est_cycle_us * 1000ull);
    return r.pid != me && now > beat && now - beat > silence;
}

// Empties an away row's hold (its row stays): it holds no allotment and no processor. Returns
// whether it held any, that is whether it has just gone away as far as DP is concerned.
bool drop_hold(Row& r) {
    bool held = r.allotment != 0 || procs_from_words(r.procs).any();
    r.allotment = 0;
    procs_to_words(ProcSet{}, r.procs);
    return held;
}
constexpr std::uint64_t kJoinLockTimeoutNs = 1000000000ull;

std::uint64_t monotonic_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string errno_text(int e) { return std::strerror(e); }

std::string describe(const std::string& path, const std::string& what) { return "GAT " + path + ": " + what; }

// A table an older apshim made (its magic, an older layout version), ours and private: after an
// upgrade the default table would otherwise leave every new job unthrottled until a reboot.
bool older_layout(int fd, const struct stat& st) {
    std::uint64_t magic = 0;
    std::uint32_t version = 0;
    return S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 077) == 0 &&
           pread(fd, &magic, sizeof magic, 0) == sizeof magic && magic == kMagic &&
           pread(fd, &version, sizeof version, 8) == sizeof version && version >= 1 && version < kLayoutVersion;
}

// Checks everything a job relies on before it trusts a mapped table.
std::string validate(const Layout* t, uid_t uid) {
    const Header& h = t->header;
    char buf[160];
    if (h.magic != kMagic) return "not an apshim table (bad magic)";
    if (h.version != kLayoutVersion) {
        std::snprintf(buf, sizeof buf, "layout version %u, this shim speaks %u (remove the file or use another APSHIM_GAT)",
                      h.version, kLayoutVersion);
        return buf;
    }
    if (h.header_size != sizeof(Header) || h.row_size != sizeof(Row) || h.max_rows != kMaxRows ||
        h.file_size != kFileSize)
        return "header sizes do not match this layout (corrupt file)";
    if (h.processors < 1 || h.processors > kMaxProcessors) {
        std::snprintf(buf, sizeof buf, "processor count %d out of range [1, %d] (corrupt file)", h.processors,
                      kMaxProcessors);
        return buf;
    }
    if (h.est_cycle_us < kMinEstCycleUs || h.est_cycle_us > kMaxEstCycleUs) return "est_cycle out of range (corrupt file)";
    if (h.owner_uid != uid) return "created for another user (corrupt file)";
    return "";
}

void init_layout(Layout* t, const CreateParams& p) {
    std::memset(static_cast<void*>(t), 0, sizeof(Layout));
    Header& h = t->header;
    h.version = kLayoutVersion;
    h.header_size = sizeof(Header);
    h.file_size = kFileSize;
    h.row_size = sizeof(Row);
    h.max_rows = kMaxRows;
    h.processors = std::clamp(p.processors, 1, kMaxProcessors);
    h.est_cycle_us = std::clamp(p.est_cycle_us, kMinEstCycleUs, kMaxEstCycleUs);
    h.owner_uid = geteuid();
    h.join_counter = 1;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&h.lock, &attr);
    pthread_mutexattr_destroy(&attr);
    __atomic_store_n(&h.magic, kMagic, __ATOMIC_RELEASE);
}

// Creates a complete table under a temporary name and links it into place: a table at `path`
// is always fully initialised, and of two jobs creating at once exactly one link() wins.
// Returns 0, EEXIST (someone else won: open theirs) or another errno. `replace`: rename() over
// the file at `path` instead (a table of an older layout; see Table::open).
int create_table(const std::string& path, const CreateParams& params, bool replace = false) {
    char tmp[512];
    std::snprintf(tmp, sizeof tmp, "%s.tmp.%d.%llx", path.c_str(), static_cast<int>(getpid()),
                  static_cast<unsigned long long>(monotonic_ns()));
    int fd = ::open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    int err = 0;
    // Reserve the blocks now: a sparse file on a full tmpfs would SIGBUS the host on first touch.
    if (fchmod(fd, 0600) != 0 || (err = posix_fallocate(fd, 0, kFileSize)) != 0) {
        if (!err) err = errno;
    } else {
        void* m = mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            err = errno;
        } else {
            init_layout(static_cast<Layout*>(m), params);
            munmap(m, kFileSize);
            if ((replace ? rename(tmp, path.c_str()) : link(tmp, path.c_str())) != 0) err = errno;
        }
    }
    close(fd);
    unlink(tmp);
    return err;
}

}  // namespace

std::unique_ptr<Table> Table::open(const std::string& path, const CreateParams& params, std::string& error,
                                   Mode mode) {
    error.clear();
    for (int attempt = 0; attempt < 4; ++attempt) {
        int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            if (e == ENOENT && mode == Mode::create_if_missing) {
                int c = create_table(path, params);
                if (c == 0 || c == EEXIST) continue;  // open the one now in place
                error = describe(path, "cannot create: " + errno_text(c));
                return nullptr;
            }
            if (e == ELOOP) error = describe(path, "is a symbolic link; refusing to follow it");
            else error = describe(path, "cannot open: " + errno_text(e));
            return nullptr;
        }
        struct stat st;
        std::string why;
        char buf[160];
        if (mode == Mode::create_if_missing && fstat(fd, &st) == 0 && older_layout(fd, st)) {
            // Replaced whole (rename), never rewritten in place: jobs of the older version keep
            // the file they mapped and simply no longer share processors with the new ones.
            close(fd);
            int c = create_table(path, params, /*replace=*/true);
            if (c != 0) {
                error = describe(path, "holds an older apshim's table and cannot be replaced: " + errno_text(c));
                return nullptr;
            }
            continue;
        }
        if (fstat(fd, &st) != 0) {
            why = "cannot stat: " + errno_text(errno);
        } else if (!S_ISREG(st.st_mode)) {
            why = "is not a regular file";
        } else if (st.st_uid != geteuid()) {
            std::snprintf(buf, sizeof buf, "belongs to uid %u, not to this user (uid %u)", st.st_uid, geteuid());
            why = buf;
        } else if ((st.st_mode & 077) != 0) {
            std::snprintf(buf, sizeof buf, "is accessible by other users (mode %04o); it must be 0600", st.st_mode & 07777);
            why = buf;
        } else if ((st.st_mode & S_IWUSR) == 0) {
            std::snprintf(buf, sizeof buf, "is not writable (mode %04o)", st.st_mode & 07777);
            why = buf;
        } else if (static_cast<std::uint64_t>(st.st_size) != kFileSize) {
            std::snprintf(buf, sizeof buf, "has %lld bytes, expected %llu (truncated, or another layout)",
                          static_cast<long long>(st.st_size), static_cast<unsigned long long>(kFileSize));
            why = buf;
        }
        if (!why.empty()) {
            close(fd);
            error = describe(path, why);
            return nullptr;
        }
        void* m = mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            error = describe(path, "cannot map: " + errno_text(errno));
            close(fd);
            return nullptr;
        }
        auto* layout = static_cast<Layout*>(m);
        why = validate(layout, geteuid());
        if (!why.empty()) {
            munmap(m, kFileSize);
            close(fd);
            error = describe(path, why);
            return nullptr;
        }
        std::unique_ptr<Table> t(new Table());
        t->map_ = layout;
        t->fd_ = fd;
        t->P_ = layout->header.processors;
        t->est_cycle_us_ = layout->header.est_cycle_us;
        t->path_ = path;
        return t;
    }
    error = describe(path, "created and removed repeatedly by others; giving up");
    return nullptr;
}

Table::~Table() {
    if (map_) munmap(map_, kFileSize);
    if (fd_ >= 0) close(fd_);
}

bool Table::lock(std::uint64_t timeout_ns, bool* recovered) {
    if (recovered) *recovered = false;
    // The deadline is on CLOCK_MONOTONIC: a step of the wall clock (NTP, an admin) must not
    // turn one est_cycle's wait into an hour, or into none.
    timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    std::uint64_t ns = static_cast<std::uint64_t>(deadline.tv_nsec) + timeout_ns;
    deadline.tv_sec += static_cast<time_t>(ns / 1000000000ull);
    deadline.tv_nsec = static_cast<long>(ns % 1000000000ull);
    pthread_mutex_t* m = &map_->header.lock;
#if defined(__SANITIZE_THREAD__)
    __tsan_mutex_pre_lock(m, __tsan_mutex_try_lock);  // GCC 12's TSan does not intercept clocklock
#endif
    int rc = pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &deadline);
#if defined(__SANITIZE_THREAD__)
    __tsan_mutex_post_lock(m, rc == 0 || rc == EOWNERDEAD ? __tsan_mutex_try_lock : __tsan_mutex_try_lock | __tsan_mutex_try_lock_failed, 0);
#endif
    if (rc == EOWNERDEAD) {
        // The holder died mid-update: rows may be half-written. Make them consistent again
        // (dead rows out, DP repaired) before anyone else sees them.
        refresh_processors();
        recovered_rows_ = reclaim_dead(Scan::all_rows, monotonic_ns());
        run_dp(-1, 0, true);
        pthread_mutex_consistent(m);
        if (recovered) *recovered = true;
        return true;
    }
    if (rc == ENOTRECOVERABLE) {
        // Someone got the lock from a dead holder and unlocked it without repairing it (our own
        // code always calls pthread_mutex_consistent first): it can never be taken again. No
        // job can update this table any more; each keeps its last allotment. Not rebuilt
        // behind the other jobs' backs: they map this file and would never see a new one.
        unrecoverable_ = true;
        APSHIM_LOG_ONCE(LogLevel::warn,
                        "GAT %s: the table's lock is unrecoverable (released without repair after its holder died); "
                        "jobs keep their last allotment: remove the file to start a new table",
                        path_.c_str());
        return false;
    }
    if (rc == 0) refresh_processors();
    return rc == 0;
}

// P as the header has it now (another job may have followed a quota change: set_processors).
void Table::refresh_processors() {
    int p = map_->header.processors;
    if (p >= 1 && p <= kMaxProcessors) P_ = p;
}

bool Table::set_processors(int P, std::uint64_t timeout_ns) {
    if (!lock(timeout_ns)) return false;
    P = std::clamp(P, 1, kMaxProcessors);
    if (P != P_) {
        map_->header.processors = P;
        P_ = P;
        run_dp(-1, 0, false);  // dp_repair: every property for the new P (allotments clamped, shares redone)
    }
    unlock();
    return true;
}

// Releases the lock, then wakes the jobs whose rows the DP runs under it changed (notify_change):
// their controllers take the new allotment now, not at their next cycle.
void Table::unlock() {
    pthread_mutex_unlock(&map_->header.lock);
    for (int slot : moved_) notify_change(slot);
    moved_.clear();
}

int Table::find_row(pid_t pid, std::uint64_t start_time) const {
    for (int i = 0; i < kMaxRows; ++i) {
        const Row& r = map_->rows[i];
        if (r.state == kLive && r.pid == pid && r.start_time == start_time) return i;
    }
    return -1;
}

Table::Scan Table::scan_due(std::uint64_t now) const {
    return now - map_->header.last_scan_ns >= est_cycle_us_ * 1000ull ? Scan::silent_rows : Scan::cheap;
}

int Table::reclaim_dead(Scan scan, std::uint64_t now, int* went_away) {
    int reclaimed = 0;
    pid_t me = getpid();
    const std::uint64_t cycle_ns = est_cycle_us_ * 1000ull;
    for (int i = 0; i < kMaxRows; ++i) {
        Row& r = map_->rows[i];
        if (r.state == kFree) continue;
        // A row its owner updated within the last est_cycle is alive as far as /proc could tell:
        // only its owner writes its heartbeat (update() and join() match the pid's start time, so
        // a process that reuses a dead job's pid never writes that job's row). Reading /proc for
        // every row each est_cycle cost the table's lock holder 15 reads of /proc/PID/stat per 5 ms
        // in a table of 16 jobs, over half its controller's CPU time (sixty-fifth session); now a
        // silent row is read, and a dead job's row goes within two est_cycles of its last update.
        std::uint64_t beat = __atomic_load_n(&r.heartbeat_ns, __ATOMIC_RELAXED);
        bool silent = now < beat || now - beat >= cycle_ns;
        bool read_proc = scan == Scan::all_rows || (scan == Scan::silent_rows && silent);
        bool dead;
        if (r.state != kLive || r.pid <= 0) dead = true;  // garbage state: reclaim
        else if (r.pid == me) dead = false;
        else dead = read_proc ? !process_alive(r.pid, r.start_time) : !pid_exists(r.pid);
        if (dead) {
            std::memset(static_cast<void*>(&r), 0, sizeof r);
            ++reclaimed;
        } else if (away(r, me, now, est_cycle_us_) && drop_hold(r)) {
            // Gone away since the last DP run: its processors are freed as a departure's are.
            if (went_away) ++*went_away;
        }
    }
    if (scan != Scan::cheap) map_->header.last_scan_ns = now;
    return reclaimed;
}

// Copies live rows into DP's vector (arrival order), applies the event, writes allotments back.
void Table::run_dp(int changed_slot, int old_desire, bool departures) {
    std::vector<DpJob> jobs;
    std::vector<int> slots;
    jobs.reserve(64);
    slots.reserve(64);
    pid_t me = getpid();
    std::uint64_t now = monotonic_ns();
    for (int i = 0; i < kMaxRows; ++i) {
        Row& r = map_->rows[i];
        if (r.state != kLive) continue;
        if (away(r, me, now, est_cycle_us_)) {  // holds nothing (reclaim_dead), whoever runs DP
            drop_hold(r);
            continue;
        }
        slots.push_back(i);
        jobs.push_back(DpJob{r.desire, r.allotment, r.join_seq});
    }
    std::vector<std::size_t> idx(jobs.size());
    for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = k;
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return jobs[a].order < jobs[b].order; });
    std::vector<DpJob> sorted;
    std::vector<int> sorted_slots;
    long changed = -1;
    for (std::size_t k : idx) {
        if (slots[k] == changed_slot) changed = static_cast<long>(sorted.size());
        sorted.push_back(jobs[k]);
        sorted_slots.push_back(slots[k]);
    }
    if (departures) dp_shrink(sorted, P_);
    if (changed >= 0) dp_desire_changed(sorted, P_, static_cast<std::size_t>(changed), old_desire);
    else if (!departures) dp_repair(sorted, P_);
    std::vector<PlacedJob> placed(sorted.size());
    std::vector<bool> moved(sorted.size(), false);
    for (std::size_t k = 0; k < sorted.size(); ++k) {
        Row& r = map_->rows[sorted_slots[k]];
        r.desire = sorted[k].desire;  // dp may have clamped a corrupt desire into [1, P]
        moved[k] = r.allotment != sorted[k].allotment;
        r.allotment = sorted[k].allotment;
        placed[k] = PlacedJob{r.allotment, procs_from_words(r.procs)};
    }
    ProcSet idle_before = unheld(placed, P_);
    place(placed, P_);
    // Every job may also run on the processors nobody holds (update()'s `idle`): when that set
    // changes (a job arrived, grew, shrank or left), the others must learn it now, not at their
    // next cycle, or a newcomer's processors stay crowded by a neighbour's threads for a cycle.
    // A departure's row is already gone from `placed` (leave(), reclaim_dead()): the processors
    // it held became idle or someone's, so the set changed for everyone.
    bool idle_changed = departures || !(unheld(placed, P_) == idle_before);
    for (std::size_t k = 0; k < sorted.size(); ++k) {
        std::uint64_t* words = map_->rows[sorted_slots[k]].procs;
        if (!(procs_from_words(words) == placed[k].procs)) {  // write only changes
            procs_to_words(placed[k].procs, words);
            moved[k] = true;
        }
        int slot = sorted_slots[k];
        if ((moved[k] || idle_changed) && slot != changed_slot &&
            std::find(moved_.begin(), moved_.end(), slot) == moved_.end())
            moved_.push_back(slot);
    }
    ++map_->header.updates;
}

std::uint32_t Table::changes(int slot) const {
    if (slot < 0 || slot >= kMaxRows) return 0;
    return __atomic_load_n(&map_->rows[slot].changes, __ATOMIC_ACQUIRE);
}

void Table::wait_for_change(int slot, std::uint32_t seen, std::uint64_t timeout_ns) const {
    timespec ts{static_cast<time_t>(timeout_ns / 1000000000ull), static_cast<long>(timeout_ns % 1000000000ull)};
    if (slot < 0 || slot >= kMaxRows) {
        nanosleep(&ts, nullptr);
        return;
    }
    syscall(SYS_futex, &map_->rows[slot].changes, FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void Table::notify_change(int slot) {
    if (slot < 0 || slot >= kMaxRows) return;
    __atomic_fetch_add(&map_->rows[slot].changes, 1, __ATOMIC_ACQ_REL);
    syscall(SYS_futex, &map_->rows[slot].changes, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

bool Table::others_want_more(int slot) const {
    pid_t me = getpid();
    std::uint64_t now = monotonic_ns();
    for (int i = 0; i < kMaxRows; ++i) {
        const Row& r = map_->rows[i];
        if (i == slot || __atomic_load_n(&r.state, __ATOMIC_RELAXED) != kLive || away(r, me, now, est_cycle_us_)) continue;
        if (__atomic_load_n(&r.desire, __ATOMIC_RELAXED) > __atomic_load_n(&r.allotment, __ATOMIC_RELAXED)) return true;
    }
    return false;
}

ProcSet Table::idle_locked() const {
    std::vector<PlacedJob> held;
    held.reserve(64);
    for (const Row& r : map_->rows)
        if (r.state == kLive) held.push_back(PlacedJob{r.allotment, procs_from_words(r.procs)});
    return unheld(held, P_);
}

int Table::current(int slot, ProcSet* procs, std::uint64_t timeout_ns, ProcSet* idle) {
    if (slot < 0 || slot >= kMaxRows) return 0;
    if (!lock(timeout_ns)) return -1;
    const Row& r = map_->rows[slot];
    int a = 0;
    // An allotment of 0: our row was away (reclaim_dead) and our next update() takes a share.
    if (r.state == kLive && r.pid == pid_ && r.start_time == start_time_ && r.allotment > 0) {
        a = std::clamp(r.allotment, 1, P_);
        if (procs) *procs = procs_from_words(r.procs);
        if (idle) *idle = idle_locked();
    }
    unlock();
    return a;
}

int Table::join(int desire, double eta, std::string& error) {
    error.clear();
    pid_ = getpid();
    start_time_ = read_proc(pid_).start_time;
    eta_ = eta;
    // Joining happens once per job, so it may wait longer than an update: under heavy
    // contention (many jobs on few cores) a futex lock is not fair and a waiter can starve briefly.
    if (!lock(kJoinLockTimeoutNs)) {
        if (unrecoverable_) {
            error = describe(path_, "its lock is unrecoverable; remove the file to start a new table");
            return -1;
        }
        std::string holder = describe_holder(lock_holder());
        error = describe(path_, holder.empty() ? "lock not available for 1 s" : "lock not available for 1 s: held by " + holder);
        return kJoinBusy;
    }
    std::uint64_t now = monotonic_ns();
    int gone = 0;
    int departed = reclaim_dead(scan_due(now), now, &gone) + gone;
    int slot = find_row(pid_, start_time_);  // our own row from before an exec()
    int old_desire = 0;
    if (slot >= 0) {
        old_desire = map_->rows[slot].desire;
    } else {
        for (int i = 0; i < kMaxRows && slot < 0; ++i)
            if (map_->rows[i].state == kFree) slot = i;
        if (slot < 0) {
            unlock();
            char buf[64];
            std::snprintf(buf, sizeof buf, "table full (%d jobs)", kMaxRows);
            error = describe(path_, buf);
            return -1;
        }
        Row& r = map_->rows[slot];
        std::memset(static_cast<void*>(&r), 0, sizeof r);
        r.pid = pid_;
        r.start_time = start_time_;
        r.join_seq = map_->header.join_counter++;
        r.allotment = 0;
        self_name(r.name, kNameLen);
        __atomic_store_n(&r.state, kLive, __ATOMIC_RELEASE);
    }
    Row& r = map_->rows[slot];
    r.desire = std::clamp(desire, 1, P_);
    r.eta = static_cast<float>(eta);
    r.heartbeat_ns = now;
    run_dp(slot, old_desire, departed > 0);
    unlock();
    return slot;
}

int Table::update(int& slot, int desire, int usage, std::uint64_t timeout_ns, ProcSet* procs, std::uint32_t runtimes,
                  ProcSet* idle) {
    if (!lock(timeout_ns)) return -1;
    pid_t me = getpid();
    if (me != pid_) {  // forked child using its parent's Table: it is a new job
        unlock();
        return -1;
    }
    std::uint64_t now = monotonic_ns();
    int gone = 0;
    int departed = reclaim_dead(scan_due(now), now, &gone) + gone;
    if (slot < 0 || slot >= kMaxRows || map_->rows[slot].state != kLive || map_->rows[slot].pid != me ||
        map_->rows[slot].start_time != start_time_) {
        // Our row was taken from us (a corrupted table, or someone's gc misjudged us): re-join.
        unlock();
        std::string err;
        slot = join(desire, eta_, err);
        if (slot < 0) return -1;
        if (!lock(timeout_ns)) return -1;
    }
    Row& r = map_->rows[slot];
    int old = r.desire;
    r.desire = std::clamp(desire, 1, P_);
    r.usage = std::clamp(usage, 0, kMaxProcessors);
    r.runtimes = runtimes;
    r.heartbeat_ns = now;
    run_dp(slot, old, departed > 0);
    int a = std::clamp(r.allotment, 1, P_);
    if (procs) *procs = procs_from_words(r.procs);
    if (idle) *idle = idle_locked();
    unlock();
    return a;
}

void Table::leave(int slot) {
    if (slot < 0 || slot >= kMaxRows) return;
    if (!lock(static_cast<std::uint64_t>(est_cycle_us_) * 1000 * 20)) return;  // the next job's scan reclaims us
    Row& r = map_->rows[slot];
    if (r.state == kLive && r.pid == getpid() && r.start_time == start_time_) {
        std::memset(static_cast<void*>(&r), 0, sizeof r);
        run_dp(-1, 0, true);
    }
    unlock();
}

int Table::gc() {
    // A job SIGKILLed while it held the lock (its updates hold it for microseconds every
    // est_cycle) leaves the lock to be repaired by the next locker, which reclaims its row: that
    // row counts as reclaimed here too (`apshim gc` said "reclaimed 0 dead rows" for it).
    recovered_rows_ = 0;
    if (!lock(1000000000ull)) return -1;
    int gone = 0;
    int n = reclaim_dead(Scan::all_rows, monotonic_ns(), &gone);
    if (n + gone > 0) run_dp(-1, 0, true);
    n += recovered_rows_;
    unlock();
    return n;
}

LockHolder Table::lock_holder() const {
    LockHolder h;
#if defined(__GLIBC__)
    // The kernel's robust-futex protocol: the word is the holder's tid, with FUTEX_WAITERS and
    // FUTEX_OWNER_DIED in its top bits.
    int word = __atomic_load_n(&map_->header.lock.__data.__lock, __ATOMIC_RELAXED);
    h.tid = static_cast<pid_t>(static_cast<unsigned>(word) & FUTEX_TID_MASK);
#endif
    if (h.tid <= 0) return LockHolder{};
    ProcInfo thread = read_proc(h.tid);
    h.state = thread.state;
    h.stopped = thread.state == 'T' || thread.state == 't';
    h.run_ns = thread_run_ns(h.tid);
    for (const Row& r : map_->rows)  // rows read without the lock: a name for the message only
        if (__atomic_load_n(&r.state, __ATOMIC_RELAXED) == kLive && thread_of(r.pid, h.tid)) {
            h.pid = r.pid;
            h.name.assign(r.name, strnlen(r.name, kNameLen));
            h.procs = procs_from_words(r.procs);
            break;
        }
    return h;
}

LockHolder Table::lock_holder(const LockHolder& before) const {
    LockHolder now = lock_holder();
    judge_stuck(before, now);
    return now;
}

bool judge_stuck(const LockHolder& before, LockHolder& now) {
    bool still = now.tid > 0 && now.tid == before.tid && now.state != 'R' && now.run_ns != 0 && now.run_ns == before.run_ns;
    now.stuck = now.stopped || still;
    return now.stuck;
}

std::string describe_holder(const LockHolder& h) {
    if (h.tid <= 0) return "";
    std::string name = printable(h.name);  // a process names itself: no control bytes into a terminal or a log
    std::string who = h.pid > 0 ? "pid " + std::to_string(h.pid) + " (" + name + ")" : "thread " + std::to_string(h.tid);
    if (h.stopped) return who + ", which is stopped";
    return h.stuck ? who + ", which is frozen (it has not run while it held the lock)" : who;
}

Snapshot Table::snapshot() {
    Snapshot s;
    // A look at the holder before the wait and one after it tell a frozen holder (same thread, no
    // run time between) from a busy one; one atomic load while the lock is free.
    LockHolder before = lock_holder();
    bool locked = lock(100000000ull);  // a stuck holder must not hang `apshim status`
    s.consistent = locked;
    const Header& h = map_->header;
    s.processors = h.processors;
    s.est_cycle_ms = h.est_cycle_us / 1000.0;
    s.updates = h.updates;
    std::uint64_t now = monotonic_ns();
    std::vector<std::pair<std::uint64_t, JobRow>> rows;
    for (int i = 0; i < kMaxRows; ++i) {
        const Row& r = map_->rows[i];
        if (r.state != kLive) continue;
        JobRow j;
        j.slot = i;
        j.pid = r.pid;
        j.start_time = r.start_time;
        j.desire = r.desire;
        j.allotment = r.allotment;
        j.usage = r.usage;
        j.eta = r.eta;
        j.heartbeat_age_ns = now > r.heartbeat_ns ? now - r.heartbeat_ns : 0;
        j.name.assign(r.name, strnlen(r.name, kNameLen));
        j.procs = procs_from_words(r.procs);
        j.runtimes = r.runtimes;
        j.away = away(r, 0, now, est_cycle_us_);  // pid 0: our own row too (`apshim status` has none)
        rows.emplace_back(r.join_seq, std::move(j));
    }
    if (locked) unlock();
    else s.holder = lock_holder(before);
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [seq, j] : rows) s.jobs.push_back(std::move(j));
    return s;
}

}  // namespace apshim::gat
