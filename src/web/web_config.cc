#include "rail/web/web_config.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "basic_auth.h"
#include "tls_context.h"

namespace rail::web {
namespace {

constexpr std::array<std::pair<std::string_view, ClientAuth>, 5> kClientAuthTypes = {{
    {"NoClientCert", ClientAuth::kNoClientCert},
    {"RequestClientCert", ClientAuth::kRequestClientCert},
    {"RequireAnyClientCert", ClientAuth::kRequireAnyClientCert},
    {"VerifyClientCertIfGiven", ClientAuth::kVerifyClientCertIfGiven},
    {"RequireAndVerifyClientCert", ClientAuth::kRequireAndVerifyClientCert},
}};

// exporter-toolkit keys this agent knows but does not implement: naming them beats "unknown".
const std::set<std::string>& UnsupportedToolkitKeys() {
  static const std::set<std::string> keys = {"http_server_config",
                                             "tls_server_config.cipher_suites",
                                             "tls_server_config.curve_preferences",
                                             "tls_server_config.prefer_server_cipher_suites",
                                             "tls_server_config.max_version",
                                             "tls_server_config.client_allowed_sans",
                                             "tls_server_config.cert",
                                             "tls_server_config.key",
                                             "tls_server_config.client_ca"};
  return keys;
}

[[noreturn]] void Fail(const std::string& source, const std::string& key, const std::string& why) {
  throw WebConfigError(source + ": " + key + ": " + why);
}

// A mapping's key as a string; a list or mapping used as a key (YAML's `? ...`) is refused here,
// where yaml-cpp's own conversion would throw an error that names no key.
std::string KeyOf(const YAML::Node& key, const std::string& source, const std::string& where) {
  if (!key.IsScalar()) Fail(source, where, "a key must be a string, not a list or mapping");
  return key.Scalar();
}

void RejectUnknownKeys(const YAML::Node& map, const std::set<std::string>& known,
                       const std::string& source, const std::string& prefix) {
  const std::string where = prefix.empty() ? "(top level)" : prefix.substr(0, prefix.size() - 1);
  for (const auto& entry : map) {
    const auto key = KeyOf(entry.first, source, where);
    if (known.contains(key)) continue;
    if (UnsupportedToolkitKeys().contains(prefix + key)) {
      Fail(source, prefix + key, "not supported by rail_exporter");
    }
    Fail(source, prefix + key, "unknown key");
  }
}

std::string String(const YAML::Node& node, const std::string& source, const std::string& key) {
  if (!node.IsScalar()) Fail(source, key, "expected a string");
  return node.Scalar();
}

std::string Path(const YAML::Node& node, const std::string& source, const std::string& key,
                 const std::string& base_dir) {
  const std::string text = String(node, source, key);
  if (text.empty()) Fail(source, key, "must not be empty");
  const std::filesystem::path path(text);
  return path.is_absolute() || base_dir.empty() ? text : (base_dir / path).string();
}

ClientAuth ParseClientAuth(const std::string& text, const std::string& source) {
  for (const auto& [name, value] : kClientAuthTypes) {
    if (text == name) return value;
  }
  std::string names;
  for (const auto& [name, value] : kClientAuthTypes) {
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  Fail(source, "tls_server_config.client_auth_type",
       "unknown value '" + text + "' (expected one of " + names + ")");
}

TlsVersion ParseMinVersion(const std::string& text, const std::string& source) {
  if (text == "TLS12") return TlsVersion::kTls12;
  if (text == "TLS13") return TlsVersion::kTls13;
  if (text == "TLS10" || text == "TLS11") {
    Fail(source, "tls_server_config.min_version",
         "'" + text + "' is not offered (TLS 1.0 and 1.1 are obsolete); use TLS12 or TLS13");
  }
  Fail(source, "tls_server_config.min_version",
       "unknown value '" + text + "' (expected TLS12 or TLS13)");
}

TlsServerConfig ParseTls(const YAML::Node& node, const std::string& source,
                         const std::string& base_dir) {
  const std::string prefix = "tls_server_config.";
  if (!node.IsMap()) Fail(source, "tls_server_config", "expected a mapping");
  RejectUnknownKeys(node,
                    {"cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version"},
                    source, prefix);
  TlsServerConfig tls;
  if (!node["cert_file"]) Fail(source, prefix + "cert_file", "missing (needed for TLS)");
  if (!node["key_file"]) Fail(source, prefix + "key_file", "missing (needed for TLS)");
  tls.cert_file = Path(node["cert_file"], source, prefix + "cert_file", base_dir);
  tls.key_file = Path(node["key_file"], source, prefix + "key_file", base_dir);
  if (node["client_ca_file"]) {
    tls.client_ca_file = Path(node["client_ca_file"], source, prefix + "client_ca_file", base_dir);
  }
  if (node["client_auth_type"]) {
    tls.client_auth = ParseClientAuth(
        String(node["client_auth_type"], source, prefix + "client_auth_type"), source);
  }
  if (node["min_version"]) {
    tls.min_version =
        ParseMinVersion(String(node["min_version"], source, prefix + "min_version"), source);
  }
  const bool verifies = tls.client_auth == ClientAuth::kVerifyClientCertIfGiven ||
                        tls.client_auth == ClientAuth::kRequireAndVerifyClientCert;
  if (verifies && tls.client_ca_file.empty()) {
    Fail(source, prefix + "client_ca_file",
         "missing: client_auth_type " + std::string(ClientAuthName(tls.client_auth)) +
             " verifies client certificates against it");
  }
  if (!tls.client_ca_file.empty() && tls.client_auth == ClientAuth::kNoClientCert) {
    // As exporter-toolkit: a CA without a policy would look like mTLS and be none.
    Fail(source, prefix + "client_auth_type",
         "client_ca_file is set but client_auth_type is NoClientCert (or unset); set "
         "RequireAndVerifyClientCert or VerifyClientCertIfGiven");
  }
  return tls;
}

std::map<std::string, std::string> ParseUsers(const YAML::Node& node, const std::string& source) {
  if (node.IsNull()) return {};
  if (!node.IsMap()) Fail(source, "basic_auth_users", "expected a mapping of user: bcrypt hash");
  std::map<std::string, std::string> users;
  for (const auto& entry : node) {
    const auto user = KeyOf(entry.first, source, "basic_auth_users");
    const std::string key = "basic_auth_users." + user;
    if (user.empty()) Fail(source, "basic_auth_users", "a user name is empty");
    if (user.find(':') != std::string::npos) {
      Fail(source, key, "a user name cannot contain ':' (basic auth splits on it)");
    }
    const std::string hash = String(entry.second, source, key);
    if (const std::string problem = detail::BcryptHashProblem(hash); !problem.empty()) {
      Fail(source, key, problem);
    }
    users[user] = hash;
  }
  return users;
}

}  // namespace

std::string_view ClientAuthName(ClientAuth auth) {
  for (const auto& [name, value] : kClientAuthTypes) {
    if (value == auth) return name;
  }
  return "?";
}

WebConfig ParseWebConfig(std::string_view yaml_text, const std::string& source,
                         const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& error) {
    throw WebConfigError(source + ": not valid YAML: " + error.msg + " (line " +
                         std::to_string(error.mark.line + 1) + ")");
  }
  WebConfig config;
  if (root.IsNull()) return config;  // an empty file: plain HTTP, no auth
  if (!root.IsMap()) throw WebConfigError(source + ": expected a mapping at the top level");
  RejectUnknownKeys(root, {"tls_server_config", "basic_auth_users"}, source, "");
  if (root["tls_server_config"]) config.tls = ParseTls(root["tls_server_config"], source, base_dir);
  if (root["basic_auth_users"]) {
    config.basic_auth_users = ParseUsers(root["basic_auth_users"], source);
  }
  return config;
}

WebConfig LoadWebConfigFile(const std::string& path) {
  const std::string source = "--web.config.file " + path;
  std::ifstream file(path);
  if (!file) throw WebConfigError(source + ": cannot read the file: " + std::strerror(errno));
  std::stringstream text;
  text << file.rdbuf();
  const std::string base_dir = std::filesystem::absolute(path).parent_path().string();
  WebConfig config = ParseWebConfig(text.str(), source, base_dir);
  if (config.tls) detail::CheckTlsConfig(*config.tls, source);
  return config;
}

}  // namespace rail::web
