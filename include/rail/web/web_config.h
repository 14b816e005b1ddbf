// --web.config.file: TLS and basic authentication of the HTTP endpoint, in the format of the
// Prometheus exporter-toolkit that node_exporter and blackbox_exporter users already have:
//
//   tls_server_config:
//     cert_file: server.crt          # relative paths: relative to the web config file
//     key_file: server.key
//     client_ca_file: ca.crt         # needed by the Verify* client_auth_types
//     client_auth_type: RequireAndVerifyClientCert
//     min_version: TLS12             # TLS12 (default) or TLS13
//   basic_auth_users:
//     prometheus: $2y$10$...         # bcrypt hashes, checked with the system's crypt(3)
//
// Every error names its key; an unknown key is an error rather than a silently open endpoint.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "rail/base/errors.h"

namespace rail::web {

// The client_auth_type values of exporter-toolkit (Go's tls.ClientAuthType names).
enum class ClientAuth {
  kNoClientCert,                // no certificate asked for
  kRequestClientCert,           // asked for, not required, not verified
  kRequireAnyClientCert,        // required, not verified
  kVerifyClientCertIfGiven,     // not required; verified against client_ca_file when given
  kRequireAndVerifyClientCert,  // required and verified against client_ca_file
};

enum class TlsVersion { kTls12, kTls13 };

struct TlsServerConfig {
  std::string cert_file;       // absolute after loading
  std::string key_file;        // absolute after loading
  std::string client_ca_file;  // absolute after loading; empty: none
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  TlsVersion min_version = TlsVersion::kTls12;
};

struct WebConfig {
  std::optional<TlsServerConfig> tls;
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash
};

class WebConfigError : public base::InputError {
 public:
  using base::InputError::InputError;
};

// Parses and checks the text of a web config: keys, enum values, bcrypt hashes. Relative file
// paths are resolved against `base_dir`. Files are not opened here (see LoadWebConfigFile).
// Throws WebConfigError "<source>: <key>: <why>".
WebConfig ParseWebConfig(std::string_view yaml_text, const std::string& source,
                         const std::string& base_dir);

// Reads `path`, parses it, and loads the certificate, key and CA into a TLS context once so
// that a missing file, a key that does not match its certificate or an unreadable CA fails at
// start, naming the key. Throws WebConfigError.
WebConfig LoadWebConfigFile(const std::string& path);

std::string_view ClientAuthName(ClientAuth auth);

}  // namespace rail::web
