# The Debian package rail-exporter, built by CPack from the install rules of cmake/install.cmake
# (scripts/package runs it). docs/deploy.md says how to install it.
#
# Dependencies: dpkg-shlibdeps computes those of the two ELF files (libssl3 among them: the agent
# links OpenSSL for TLS); Depends adds what they load at run time that it cannot see:
#   ibverbs-providers  the verbs providers libibverbs loads for each RDMA device (mlx5, ...)
#   libucx0            UCX's transport modules, loaded from lib/<triplet>/ucx/ (ib, rdmacm, cma)
#   libc6              the NSS modules (libnss_files, libnss_dns) behind name lookups
#   libcurl4           libcurl.so.4, which the Kubernetes discovery opens when it is configured
#   adduser            the postinst creates the rail_exporter user
# Recommends rdma-core: it loads the RDMA kernel modules and makes /dev/infiniband usable; lldpd:
# the neighbor collector reads each rail's switch port from it (liblldpctl, its client library,
# comes through dpkg-shlibdeps).
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "rail-exporter")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "rail_exporter")
set(CPACK_PACKAGE_CONTACT
    "rail_exporter maintainers <maintainers@users.noreply.a-seed-aac99b40.example>"
    CACHE STRING "The Maintainer field of the Debian package")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Prometheus exporter and prober for multi-rail RDMA hosts")
# The summary becomes the first line of the Description; this, wrapped, the rest.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "rail_exporter publishes every RDMA port's counters, hw counters and GID
table, the rails' netdevs, bonds and PCIe paths, and the results of scheduled
UCX and TCP probes with peer agents over each rail, with health verdicts, on a
Prometheus scrape endpoint. The package installs the agent and its probe
worker, a hardened systemd unit, an example configuration, Grafana dashboards
and Prometheus rules.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_PACKAGE_NAME "rail-exporter")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "net")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "ibverbs-providers, libucx0, libc6, libcurl4, adduser")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "rdma-core, lldpd")
# CMake 3.25 marks no file as a conffile by itself: deploy/debian/conffiles lists them.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA)
foreach(control conffiles postinst prerm postrm)
  list(APPEND CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/${control})
endforeach()
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# What Debian asks of every package: its copyright file and changelog (gzip -9, no name or
# time in the header, as dh_compress makes it); and the deployment guide beside them.
configure_file(deploy/debian/changelog.in ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog @ONLY)
execute_process(COMMAND gzip -9 -n -f -k ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog
                COMMAND_ERROR_IS_FATAL ANY)
install(FILES deploy/debian/copyright ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/rail-exporter COMPONENT agent)
install(FILES docs/deploy.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/rail-exporter
        RENAME README.md COMPONENT agent OPTIONAL)

include(CPack)
