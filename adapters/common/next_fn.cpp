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

}  // namespace

void* next_symbol(const char* name, bool global_only) noexcept {
    if (void* p = dlsym(RTLD_NEXT, name)) return p;
    if (global_only) return nullptr;
    Dl_info self;
    Objects objects;
    if (dladdr(reinterpret_cast<void*>(&next_symbol), &self)) objects.self = self.dli_fname;
    dl_iterate_phdr(&collect, &objects);
    for (int i = 0; i < objects.n; ++i) {
        // RTLD_NOLOAD: only an object that is already loaded; never load one ourselves.
        void* h = dlopen(objects.names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        void* p = dlsym(h, name);
        Dl_info where;
        // dlsym on a handle also searches that object's dependencies: take the answer only when
        // it is not the shim's own definition.
        bool ours = p && dladdr(p, &where) && objects.self && where.dli_fname &&
                    std::strcmp(where.dli_fname, objects.self) == 0;
        dlclose(h);  // drops the reference NOLOAD took; the program's own keeps it loaded
        if (p && !ours) return p;
    }
    return nullptr;
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

}  // namespace apshim
