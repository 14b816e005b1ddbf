// Self-signed certificates made at test time with the OpenSSL API, written as PEM files.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

namespace rail::testing {

struct PemPair {
  std::string cert_file;
  std::string key_file;
};

// An EC P-256 key and a self-signed certificate for `common_name`, valid for a day.
inline PemPair WriteSelfSignedCertificate(const std::string& directory, const std::string& name,
                                          const std::string& common_name = "localhost") {
  const std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  const std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  if (!key || !cert) throw std::runtime_error("OpenSSL could not make a key or certificate");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(cert.get(), subject);
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    throw std::runtime_error("OpenSSL could not sign the certificate");
  }
  PemPair pair{directory + "/" + name + ".crt", directory + "/" + name + ".key"};
  const std::unique_ptr<FILE, decltype(&std::fclose)> cert_out(
      std::fopen(pair.cert_file.c_str(), "w"), std::fclose);
  const std::unique_ptr<FILE, decltype(&std::fclose)> key_out(
      std::fopen(pair.key_file.c_str(), "w"), std::fclose);
  if (!cert_out || !key_out || PEM_write_X509(cert_out.get(), cert.get()) != 1 ||
      PEM_write_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    throw std::runtime_error("cannot write " + pair.cert_file + " or " + pair.key_file);
  }
  return pair;
}

}  // namespace rail::testing
