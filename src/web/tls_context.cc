#include "tls_context.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

namespace rail::web::detail {
namespace {

// The most recent OpenSSL error of this thread, as text; clears the queue.
std::string OpenSslError() {
  unsigned long code = 0;
  unsigned long last = 0;
  while ((code = ERR_get_error()) != 0) last = code;
  if (last == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(last, text, sizeof(text));
  return text;
}

// OpenSSL words a missing file as "system library"; say it the way people read it.
bool Readable(const std::string& path, const char* key, std::string* error) {
  std::ifstream file(path);
  if (file) return true;
  *error = std::string("tls_server_config.") + key + ": cannot read " + path + ": " +
           std::strerror(errno);
  return false;
}

// RequestClientCert and RequireAnyClientCert accept whatever certificate the client shows, as
// Go's crypto/tls does for them: the handshake asks for it, nothing checks it.
int AcceptAnyCertificate(int, X509_STORE_CTX*) {
  return 1;
}

bool UseCertificateChain(SSL_CTX* context, const std::string& cert_file, std::string* error) {
  if (!Readable(cert_file, "cert_file", error)) return false;
  if (SSL_CTX_use_certificate_chain_file(context, cert_file.c_str()) != 1) {
    *error =
        "tls_server_config.cert_file: no PEM certificate in " + cert_file + ": " + OpenSslError();
    return false;
  }
  return true;
}

// Needs the certificate loaded first: the key is checked against it.
bool UsePrivateKey(SSL_CTX* context, const std::string& key_file, std::string* error) {
  if (!Readable(key_file, "key_file", error)) return false;
  if (SSL_CTX_use_PrivateKey_file(context, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    // Loading the key already checks it against the certificate.
    const unsigned long code = ERR_peek_last_error();
    const bool mismatch =
        ERR_GET_LIB(code) == ERR_LIB_X509 && ERR_GET_REASON(code) == X509_R_KEY_VALUES_MISMATCH;
    *error = "tls_server_config.key_file: " +
             (mismatch ? key_file + " does not match the certificate in cert_file: "
                       : "no PEM private key in " + key_file + ": ") +
             OpenSslError();
    return false;
  }
  if (SSL_CTX_check_private_key(context) != 1) {
    *error = "tls_server_config.key_file: " + key_file +
             " does not match the certificate in cert_file: " + OpenSslError();
    return false;
  }
  return true;
}

bool UseClientCas(SSL_CTX* context, const std::string& client_ca_file, std::string* error) {
  if (!Readable(client_ca_file, "client_ca_file", error)) return false;
  if (SSL_CTX_load_verify_locations(context, client_ca_file.c_str(), nullptr) != 1) {
    *error = "tls_server_config.client_ca_file: no PEM certificate in " + client_ca_file + ": " +
             OpenSslError();
    return false;
  }
  // The CA names sent in the certificate request let clients pick the right certificate.
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(client_ca_file.c_str());
  if (names == nullptr) {
    *error = "tls_server_config.client_ca_file: no CA names in " + client_ca_file + ": " +
             OpenSslError();
    return false;
  }
  SSL_CTX_set_client_CA_list(context, names);  // takes ownership
  return true;
}

void SetClientVerification(SSL_CTX* context, ClientAuth client_auth) {
  switch (client_auth) {
    case ClientAuth::kNoClientCert:
      SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuth::kRequestClientCert:
      SSL_CTX_set_verify(context, SSL_VERIFY_PEER, AcceptAnyCertificate);
      break;
    case ClientAuth::kRequireAnyClientCert:
      SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         AcceptAnyCertificate);
      break;
    case ClientAuth::kVerifyClientCertIfGiven:
      SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
}

}  // namespace

bool ConfigureTlsContext(SSL_CTX* context, const TlsServerConfig& config, std::string* error) {
  ERR_clear_error();
  const int min_version =
      config.min_version == TlsVersion::kTls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (SSL_CTX_set_min_proto_version(context, min_version) != 1) {
    *error = "tls_server_config.min_version: " + OpenSslError();
    return false;
  }
  if (!UseCertificateChain(context, config.cert_file, error)) return false;
  if (!UsePrivateKey(context, config.key_file, error)) return false;
  if (!config.client_ca_file.empty() && !UseClientCas(context, config.client_ca_file, error)) {
    return false;
  }
  SetClientVerification(context, config.client_auth);
  // Session resumption with client certificates needs a context id, or OpenSSL refuses resumed
  // sessions with "session id context uninitialized".
  static constexpr unsigned char kSessionContext[] = "rail_exporter";
  SSL_CTX_set_session_id_context(context, kSessionContext, sizeof(kSessionContext) - 1);
  // Up to --web.max-connections connections may sit idle in their handshake: without this each
  // keeps its record buffers (~34 KiB) while it waits.
  SSL_CTX_set_mode(context, SSL_MODE_RELEASE_BUFFERS);
  return true;
}

void CheckTlsConfig(const TlsServerConfig& config, const std::string& source) {
  const std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_server_method()),
                                                                  SSL_CTX_free);
  if (!context) throw WebConfigError(source + ": tls_server_config: " + OpenSslError());
  std::string error;
  if (!ConfigureTlsContext(context.get(), config, &error)) {
    throw WebConfigError(source + ": " + error);
  }
}

}  // namespace rail::web::detail
