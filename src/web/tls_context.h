// Applies a web config's tls_server_config to an OpenSSL server context. Used twice: once at
// start on a scratch context, so that bad files fail before anything listens, and then from
// civetweb's init_ssl callback on the context civetweb serves with.
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "rail/web/web_config.h"

namespace rail::web::detail {

// false + `error` ("tls_server_config.<key>: <why>") when a file cannot be used.
bool ConfigureTlsContext(SSL_CTX* context, const TlsServerConfig& config, std::string* error);

// Loads `config` into a scratch context and throws WebConfigError with `source` on failure.
void CheckTlsConfig(const TlsServerConfig& config, const std::string& source);

// Makes civetweb's dlopen("libssl.so") find every function it looks up: loads
// librail_tls_compat.so (src/tls_compat/ssl_compat.cc) once, from next to the executable or from
// the build tree, and checks the result. false + `error` when TLS would crash civetweb.
bool PrepareCivetwebTls(std::string* error);

}  // namespace rail::web::detail
