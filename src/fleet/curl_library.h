// libcurl, opened at run time (dlopen) by the Kubernetes discovery, never linked.
//
// Only the Kubernetes discovery speaks HTTP as a client, and almost no host configures it; yet
// Debian's libcurl brings 27 of the agent's 46 shared libraries with it (GnuTLS, nettle, LDAP,
// SASL, Kerberos/GSSAPI, RTMP, libssh2, ...): 3.7 MiB of RSS (1.5 MiB Pss) and GnuTLS's 105 KiB
// of heap at start-up, on every host, which put the agent's RSS above node_exporter's. So the
// agent opens libcurl.so.4 when a Kubernetes source is created, as the gpu layer opens the CUDA
// driver, and calls it through the table below. The types come from <curl/curl.h>, so a call
// through the table is checked as a direct call would be.
#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>

namespace rail::fleet {

// Exactly the functions kubernetes_source.cc calls.
struct CurlApi {
  decltype(&::curl_global_init) global_init = nullptr;
  decltype(&::curl_easy_init) easy_init = nullptr;
  decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&::curl_easy_reset) easy_reset = nullptr;
  decltype(&::curl_easy_setopt) easy_setopt = nullptr;
  decltype(&::curl_easy_perform) easy_perform = nullptr;
  decltype(&::curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&::curl_easy_strerror) easy_strerror = nullptr;
  decltype(&::curl_easy_escape) easy_escape = nullptr;
  decltype(&::curl_free) free = nullptr;
  decltype(&::curl_slist_append) slist_append = nullptr;
  decltype(&::curl_slist_free_all) slist_free_all = nullptr;
};

// The soname the agent opens, from the Debian package libcurl4 (which the .deb depends on).
inline constexpr const char* kCurlLibraryName = "libcurl.so.4";

// An opened libcurl and its resolved functions; closes the library when destroyed.
class CurlLibrary {
 public:
  // The process's libcurl.so.4, opened and curl_global_init'ed by the first caller (any thread;
  // the others wait), kept until the process ends. nullptr when it cannot be: then *error says
  // why, the same on every call.
  static const CurlLibrary* Process(std::string* error);

  // Opens `library` and resolves every function of CurlApi; no curl_global_init. nullptr and
  // *error when the library is missing ("Kubernetes discovery needs libcurl.so.4 (Debian package
  // libcurl4): <dlerror>") or lacks a function. For the tests: Process() is what the agent uses.
  static std::unique_ptr<CurlLibrary> Load(const std::string& library, std::string* error);

  ~CurlLibrary();
  CurlLibrary(const CurlLibrary&) = delete;
  CurlLibrary& operator=(const CurlLibrary&) = delete;

  const CurlApi& api() const { return api_; }

 private:
  CurlLibrary(void* handle, const CurlApi& api) : handle_(handle), api_(api) {}

  void* handle_;
  CurlApi api_;
};

}  // namespace rail::fleet
