// Applies a web config's tls_server_config to an OpenSSL server context. Used twice: once when the
// web config is loaded, on a scratch context, so that bad files fail before anything listens, and
// then on the context the listener serves with.
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "rail/web/web_config.h"

namespace rail::web::detail {

// false + `error` ("tls_server_config.<key>: <why>") when a file cannot be used.
bool ConfigureTlsContext(SSL_CTX* context, const TlsServerConfig& config, std::string* error);

// Loads `config` into a scratch context and throws WebConfigError with `source` on failure.
void CheckTlsConfig(const TlsServerConfig& config, const std::string& source);

}  // namespace rail::web::detail
