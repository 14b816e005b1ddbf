#include "fleet/curl_library.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

namespace rail::fleet {

namespace {

struct DlClose {
  void operator()(void* handle) const { dlclose(handle); }
};
using LibraryHandle = std::unique_ptr<void, DlClose>;

// dlsym's void* into a typed function pointer (a conversion C++ leaves to memcpy).
template <typename Fn>
bool Resolve(void* handle, const std::string& library, const char* name, Fn& slot,
             std::string* error) {
  dlerror();
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) {
    const char* why = dlerror();
    *error = library + " has no " + name + (why != nullptr ? std::string(": ") + why : "");
    return false;
  }
  std::memcpy(&slot, &symbol, sizeof slot);
  return true;
}

bool ResolveAll(void* handle, const std::string& library, CurlApi& api, std::string* error) {
  return Resolve(handle, library, "curl_global_init", api.global_init, error) &&
         Resolve(handle, library, "curl_easy_init", api.easy_init, error) &&
         Resolve(handle, library, "curl_easy_cleanup", api.easy_cleanup, error) &&
         Resolve(handle, library, "curl_easy_reset", api.easy_reset, error) &&
         Resolve(handle, library, "curl_easy_setopt", api.easy_setopt, error) &&
         Resolve(handle, library, "curl_easy_perform", api.easy_perform, error) &&
         Resolve(handle, library, "curl_easy_getinfo", api.easy_getinfo, error) &&
         Resolve(handle, library, "curl_easy_strerror", api.easy_strerror, error) &&
         Resolve(handle, library, "curl_easy_escape", api.easy_escape, error) &&
         Resolve(handle, library, "curl_free", api.free, error) &&
         Resolve(handle, library, "curl_slist_append", api.slist_append, error) &&
         Resolve(handle, library, "curl_slist_free_all", api.slist_free_all, error);
}

}  // namespace

std::unique_ptr<CurlLibrary> CurlLibrary::Load(const std::string& library, std::string* error) {
  dlerror();
  // RTLD_NOW: a library of libcurl's closure that lacks a symbol fails here, not mid-fetch.
  // RTLD_LOCAL: its symbols stay out of the global scope, where libraries opened later would
  // bind to them.
  LibraryHandle handle(dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = "Kubernetes discovery needs " + library +
             " (Debian package libcurl4): " + (why != nullptr ? why : "cannot be loaded");
    return nullptr;
  }
  CurlApi api;
  if (!ResolveAll(handle.get(), library, api, error)) return nullptr;
  return std::unique_ptr<CurlLibrary>(new CurlLibrary(handle.release(), api));
}

CurlLibrary::~CurlLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

const CurlLibrary* CurlLibrary::Process(std::string* error) {
  static std::once_flag once;
  // Never destroyed: a fleet thread may still be inside libcurl while the process exits, and
  // curl_global_cleanup is not safe to run then.
  static const CurlLibrary* library = nullptr;
  static std::string load_error;
  std::call_once(once, [] {
    std::unique_ptr<CurlLibrary> loaded = Load(kCurlLibraryName, &load_error);
    if (loaded == nullptr) return;
    // curl_global_init is not thread-safe in every libcurl: once per process, before any handle.
    const CURLcode code = loaded->api().global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
      load_error = std::string("curl_global_init failed: ") + loaded->api().easy_strerror(code);
      return;
    }
    library = loaded.release();
  });
  if (library == nullptr) *error = load_error;
  return library;
}

}  // namespace rail::fleet
