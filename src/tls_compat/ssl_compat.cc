// librail_tls_compat.so: lets Debian 12's civetweb 1.15 serve TLS with OpenSSL 3.
//
// civetweb loads OpenSSL itself: dlopen("libssl.so"), then dlsym for each function it uses. One
// of them, SSL_get_peer_certificate, is only a macro in OpenSSL 3 (the function is now
// SSL_get1_peer_certificate), so civetweb's pointer stays null and every TLS connection crashes
// the process right after its handshake (civetweb issue 1334). This library carries the soname
// "libssl.so" and depends on the real libssl.so.3. Once the agent has loaded it (web server,
// TLS only), glibc's dlopen("libssl.so") returns it because the name matches a loaded object's
// soname, and dlsym on it finds the one missing function here and every other one in its
// dependency, the real OpenSSL.
#include <openssl/ssl.h>

#undef SSL_get_peer_certificate

extern "C" {

// The OpenSSL 1.1 function: the peer's certificate with a reference the caller frees, which is
// exactly what SSL_get1_peer_certificate returns.
__attribute__((visibility("default"))) X509* SSL_get_peer_certificate(const SSL* ssl) {
  return SSL_get1_peer_certificate(ssl);
}
}
