# The Debian package rail-exporter, built by CPack from the install rules of cmake/install.cmake
# (scripts/package runs it). docs/deploy.md says how to install it.
#
# Dependencies: dpkg-shlibdeps computes those of the three ELF files; Depends adds what they
# load at run time that it cannot see:
#   ibverbs-providers  the verbs providers libibverbs loads for each RDMA device (mlx5, ...)
#   libucx0            UCX's transport modules, loaded from lib/<triplet>/ucx/ (ib, rdmacm, cma)
#   libssl3            the OpenSSL civetweb opens by name for TLS (dlopen "libssl.so", served by
#                      librail_tls_compat.so, which needs libssl.so.3)
#   libssl-dev         the unversioned libcrypto.so civetweb also opens (see below)
#   libc6              the NSS modules (libnss_files, libnss_dns) behind name lookups
#   adduser            the postinst creates the rail_exporter user
# Recommends rdma-core: it loads the RDMA kernel modules and makes /dev/infiniband usable.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "rail-exporter")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "rail_exporter")
set(CPACK_PACKAGE_CONTACT "rail_exporter maintainers <maintainers@users.noreply.a-seed-aac99b40.example>"
    CACHE STRING "The Maintainer field of the Debian package")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Prometheus exporter and prober for multi-rail RDMA hosts")
# The summary becomes the first line of the Description; this, wrapped, the rest.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "rail_exporter publishes every RDMA port's counters, hw counters and GID table, the rails'
netdevs, bonds and PCIe paths, and the results of scheduled UCX and TCP probes with peer
agents over each rail, with health verdicts, on a Prometheus scrape endpoint. The package
installs the agent and its probe worker, a hardened systemd unit, an example configuration,
Grafana dashboards and Prometheus rules.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_PACKAGE_NAME "rail-exporter")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "net")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# civetweb 1.15 opens "libcrypto.so" by that name, which only libssl-dev provides, and TLS fails
# to start without it ("Error initializing SSL context"). A library of that soname loaded by
# the agent, as librail_tls_compat.so is for "libssl.so", would make it unneeded: once the
# build has one (target rail_crypto_compat), libssl3 is enough.
set(rail_tls_depends "libssl3")
if(NOT TARGET rail_crypto_compat)
  string(APPEND rail_tls_depends ", libssl-dev")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "ibverbs-providers, libucx0, ${rail_tls_depends}, libc6, adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "rdma-core")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/deploy/debian/conffiles;${PROJECT_SOURCE_DIR}/deploy/debian/postinst;${PROJECT_SOURCE_DIR}/deploy/debian/prerm;${PROJECT_SOURCE_DIR}/deploy/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# What Debian asks of every package: its copyright file; and the deployment guide beside it.
install(FILES deploy/debian/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/rail-exporter
        COMPONENT agent)
install(FILES docs/deploy.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/rail-exporter
        RENAME README.md COMPONENT agent OPTIONAL)

include(CPack)
