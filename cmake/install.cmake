# Where an installed rail_exporter keeps its files (docs/deploy.md). The Debian package
# (cmake/package.cmake), the container image (scripts/image) and `cmake --install` all use these
# rules, so the three layouts cannot drift apart.
#
#   /usr/bin/rail_exporter                          the agent
#   /usr/lib/rail_exporter/                         what only the agent runs: the probe worker;
#                                                   the agent looks in ../lib/rail_exporter/ from
#                                                   its own directory (base/companion.h)
#   /etc/rail_exporter/rail_exporter.yml            the example configuration (a conffile)
#   /etc/default/rail-exporter                      the unit's extra flags (a conffile)
#   /usr/share/rail_exporter/dashboards/            Grafana dashboards
#   /usr/share/rail_exporter/prometheus/            recording and alerting rules, scrape configs
#   /usr/share/rail_exporter/grafana/provisioning/  Grafana provisioning files
#   /lib/systemd/system/rail-exporter.service       the hardened unit
include(GNUInstallDirs)

# Not CMAKE_INSTALL_LIBDIR: on Debian that is lib/<triplet>, and the agent looks in ../lib/.
set(RAIL_COMPANION_DIR "lib/rail_exporter")
# Debian 12 keeps units under /lib even with /usr merged; systemd finds both.
set(RAIL_SYSTEMD_UNIT_DIR "/lib/systemd/system" CACHE PATH "Where the systemd unit is installed")
set(RAIL_DATA_DIR "${CMAKE_INSTALL_DATADIR}/rail_exporter")
# Absolute, as the unit's: CMAKE_INSTALL_SYSCONFDIR is "etc" under the prefix, which would put
# the configuration in /usr/etc for the package's prefix /usr.
set(RAIL_SYSCONF_DIR "/etc" CACHE PATH "Where the configuration files are installed")

install(TARGETS rail_exporter RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT agent)
install(TARGETS rail_exporter_probe_worker RUNTIME DESTINATION ${RAIL_COMPANION_DIR}
        COMPONENT agent)

install(FILES deploy/config/rail_exporter.yml DESTINATION ${RAIL_SYSCONF_DIR}/rail_exporter
        COMPONENT agent)
# The unit's extra flags (EnvironmentFile=).
install(FILES deploy/config/rail-exporter.default DESTINATION ${RAIL_SYSCONF_DIR}/default
        RENAME rail-exporter COMPONENT agent)
install(FILES deploy/systemd/rail-exporter.service DESTINATION ${RAIL_SYSTEMD_UNIT_DIR}
        COMPONENT agent)

file(GLOB rail_dashboards CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/dashboards/*.json)
install(FILES ${rail_dashboards} DESTINATION ${RAIL_DATA_DIR}/dashboards COMPONENT agent)
install(DIRECTORY deploy/prometheus/ DESTINATION ${RAIL_DATA_DIR}/prometheus COMPONENT agent
        FILES_MATCHING PATTERN "*.yml" PATTERN "*_test.yml" EXCLUDE)
install(DIRECTORY deploy/grafana/provisioning/ DESTINATION ${RAIL_DATA_DIR}/grafana/provisioning
        COMPONENT agent OPTIONAL)
