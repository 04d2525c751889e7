#include "adapters/common/next_fn.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace apshim {
namespace {

// Names of the loaded objects, collected first: dlopen() is not called from inside
// dl_iterate_phdr's callback (it holds a loader lock).
struct Objects {
    static constexpr int kMax = 512;
    const char* names[kMax];
    int n = 0;
    const char* self = nullptr;  // libapshim.so's path, as the loader has it
};

int collect(dl_phdr_info* info, size_t, void* data) {
    auto* o = static_cast<Objects*>(data);
    if (o->n < Objects::kMax && info->dlpi_name && info->dlpi_name[0] &&
        !(o->self && std::strcmp(info->dlpi_name, o->self) == 0))
        o->names[o->n++] = info->dlpi_name;
    return 0;
}

// `name` as dlsym finds it through the loaded object `object` (which also searches that object's
// dependencies), unless that is the shim's own definition (`self`: libapshim.so's path); null
// when none. RTLD_NOLOAD: only an object that is already loaded; never load one ourselves.
void* symbol_through(const char* object, const char* name, const char* self) noexcept {
    void* h = dlopen(object, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return nullptr;
    void* p = dlsym(h, name);
    dlclose(h);  // drops the reference NOLOAD took; the program's own keeps it loaded
    Dl_info where;
    bool ours = p && self && dladdr(p, &where) && where.dli_fname && std::strcmp(where.dli_fname, self) == 0;
    return ours ? nullptr : p;
}

}  // namespace

void* next_symbol(const char* name, bool global_only) noexcept {
    if (void* p = dlsym(RTLD_NEXT, name)) return p;
    if (global_only) return nullptr;
    Dl_info self;
    Objects objects;
    if (dladdr(reinterpret_cast<void*>(&next_symbol), &self)) objects.self = self.dli_fname;
    dl_iterate_phdr(&collect, &objects);
    for (int i = 0; i < objects.n; ++i)
        if (void* p = symbol_through(objects.names[i], name, objects.self)) return p;
    return nullptr;
}

void RuntimeCopies::note(const void* base) noexcept {
    if (!base) return;
    const void* none = nullptr;
    if (first_.compare_exchange_strong(none, base, std::memory_order_acq_rel) || none == base) return;
    none = nullptr;
    second_.compare_exchange_strong(none, base, std::memory_order_acq_rel);
}

void* symbol_for_caller(const void* caller, const char* name, bool& global) noexcept {
    global = false;
    if (void* p = dlsym(RTLD_NEXT, name)) {
        global = true;
        return p;
    }
    Dl_info self, info;
    link_map* lm = nullptr;
    if (dladdr(reinterpret_cast<void*>(&symbol_for_caller), &self) &&
        dladdr1(caller, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) && lm && lm->l_name &&
        lm->l_name[0] && !(self.dli_fname && std::strcmp(lm->l_name, self.dli_fname) == 0)) {
        // The caller's handle: dlsym searches the caller and its dependencies (its local scope),
        // where it found its runtime when it was loaded. The main program (empty name) has the
        // global scope as its own, answered above.
        if (void* p = symbol_through(lm->l_name, name, self.dli_fname)) return p;
    }
    return next_symbol(name);
}

SiteCache g_site_cache;

void SiteCache::insert(const void* site, const void* owner, void* fn) noexcept {
    std::uintptr_t s = reinterpret_cast<std::uintptr_t>(site);
    for (unsigned i = 0, h = hash(s); i < kProbes; ++i, ++h) {
        Slot& slot = slots_[h % kSlots];
        std::uintptr_t at = 0;
        if (!slot.site.compare_exchange_strong(at, s, std::memory_order_relaxed)) {
            // Taken: by this site for this owner already (another thread's insert), or go on.
            if (at == s && slot.owner.load(std::memory_order_relaxed) == owner) return;
            continue;
        }
        slot.owner.store(owner, std::memory_order_relaxed);
        slot.fn.store(fn, std::memory_order_release);
        return;
    }
}

void* resolve_for_caller(const void* site, const char* name, const void* owner, std::atomic<void*>& global,
                         RuntimeCopies* copies) noexcept {
    bool is_global = false;
    void* p = symbol_for_caller(site, name, is_global);
    if (!p) return nullptr;
    if (is_global) {
        global.store(p, std::memory_order_release);
        return p;
    }
    g_site_cache.insert(site, owner, p);
    Dl_info where;
    if (copies && dladdr(p, &where)) copies->note(where.dli_fbase);
    return p;
}

void missing_entry_point(const char* name) noexcept {
    static const char msg[] = "apshim: the runtime's entry point was not found in this process: ";
    if (write(2, msg, sizeof msg - 1) < 0 || write(2, name, std::strlen(name)) < 0 || write(2, "\n", 1) < 0) {}
    std::abort();
}

void* symbol_beside(void* defined, const char* name) noexcept {
    Dl_info info;
    if (!defined || !dladdr(defined, &info) || !info.dli_fname) return nullptr;
    void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) return nullptr;
    void* p = dlsym(lib, name);
    dlclose(lib);
    return p;
}

bool object_defines(const void* site, const char* name) noexcept {
    Dl_info at{}, def{};
    void* p = symbol_beside(const_cast<void*>(site), name);
    return p && dladdr(site, &at) && dladdr(p, &def) && at.dli_fbase == def.dli_fbase;
}

}  // namespace apshim
