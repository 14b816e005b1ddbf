// librail_crypto_compat.so: the other half of librail_tls_compat.so (ssl_compat.cc).
//
// For TLS civetweb 1.15 also calls dlopen("libcrypto.so"): the unversioned name that only the
// development package (libssl-dev) links to libcrypto.so.3, so an installed agent or an image
// without it fails at the first TLS set-up ("Error initializing SSL context"). This library has
// no code: it carries the soname "libcrypto.so" and depends on libcrypto.so.3. Once the agent has
// loaded it, dlopen("libcrypto.so") returns it, and dlsym on it finds every function in that
// dependency.
