# What `cmake --install` puts where besides the two programs (app/CMakeLists.txt), and the Debian
# package CPack makes of it: `cpack -G DEB` in a built tree gives moraine_<version>_<arch>.deb.
# scripts/check-package builds and inspects that package.
#
# The layout is the Debian one, which the systemd unit names literally: /usr/bin/moraine-router
# reading /etc/moraine/moraine.yaml. The package's prefix is /usr (CPack's default for DEB); a
# plain `cmake --install` gets the same layout with `--prefix /usr`.

set(moraine_conf_dir /etc/moraine)  # absolute: /etc whatever the prefix, as the unit expects
set(moraine_staging ${CMAKE_BINARY_DIR}/packaging)

# The configuration. moraine.yaml is the documented default (localhost endpoints, users from
# `passwords` beside it). The demo's passwords file is not installed there: its demo/demo login
# would be a known password on every installed router. An empty file instead: the router starts
# and refuses every createSession until the administrator adds `userId hash` lines.
# In the package they are dpkg conffiles, so an upgrade keeps the administrator's edits; a plain
# `cmake --install` has no such care, so it writes each file only where there is none yet.
file(WRITE ${moraine_staging}/passwords "")
foreach(conf_file ${PROJECT_SOURCE_DIR}/conf/moraine.yaml ${moraine_staging}/passwords)
  get_filename_component(name ${conf_file} NAME)
  install(CODE "
    if(EXISTS \"\$ENV{DESTDIR}${moraine_conf_dir}/${name}\")
      message(STATUS \"Kept (already there): \$ENV{DESTDIR}${moraine_conf_dir}/${name}\")
    else()
      file(INSTALL DESTINATION \"${moraine_conf_dir}\" TYPE FILE FILES \"${conf_file}\")
    endif()")
endforeach()

# Examples: the Glacier2 property file and the demo's passwords (glacier2.cfg names its password
# file relative to the repository root, so it is a model to copy, not a file to run), and the
# Grafana dashboard for the router's /metrics, to import into Grafana.
install(FILES ${PROJECT_SOURCE_DIR}/conf/glacier2.cfg ${PROJECT_SOURCE_DIR}/conf/passwords
              ${PROJECT_SOURCE_DIR}/conf/grafana-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# lib/systemd/system under the prefix: /usr/lib/systemd/system in the package, which systemd
# reads on Debian 12 (merged /usr) as on other distributions.
install(FILES ${PROJECT_SOURCE_DIR}/conf/moraine-router.service DESTINATION lib/systemd/system)

# --- The Debian package -------------------------------------------------------------------------

set(CPACK_PACKAGE_NAME moraine)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
if(NOT CPACK_PACKAGE_CONTACT)  # -DCPACK_PACKAGE_CONTACT=... for another maintainer
  set(CPACK_PACKAGE_CONTACT "Moraine Lead <lead@moraine.dev>")
endif()
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Glacier2-compatible edge router for Ice RPC and publish/subscribe")
# The long description; CPack puts the summary above it and indents each line.
set(CPACK_PACKAGE_DESCRIPTION "moraine-router is a drop-in for ZeroC's glacier2router (Ice protocol 1.0): unmodified
Ice 3.7 clients create sessions through it, call back-end objects and receive callbacks over
one connection. It serves an IceStorm-compatible topic service beside the router;
moraine-topics runs that service alone. Endpoints: tcp, ssl, ws and wss.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # moraine_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Debian ships binaries without their debug sections; this also keeps a RelWithDebInfo tree's
# package small.
set(CPACK_STRIP_FILES ON)

# Shared-library dependencies from dpkg-shlibdeps (dpkg-dev, part of build-essential) when it is
# there; otherwise Debian 12's names for what the two programs link, found with
# `dpkg -S` on their `ldd` output. adduser is for postinst.
find_program(MORAINE_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(MORAINE_DPKG_SHLIBDEPS)
if(MORAINE_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "adduser, libboost-program-options1.81.0, libbz2-1.0, libc6 (>= 2.34), libcrypt1 (>= 1:4.3.0), libfmt9, libgcc-s1, libspdlog1.10, libsqlite3-0, libssl3 (>= 3.0.0), libstdc++6 (>= 11), libyaml-cpp0.7")
endif()

# Maintainer scripts and the conffiles list, written here so that the whole package is described
# in this one file. CONTROL_STRICT_PERMISSION gives them the modes Debian policy requires.
file(WRITE ${moraine_staging}/conffiles
     "${moraine_conf_dir}/moraine.yaml\n${moraine_conf_dir}/passwords\n")
file(WRITE ${moraine_staging}/postinst [=[#!/bin/sh
# moraine postinst (from cmake/packaging.cmake)
set -e
if [ "$1" = configure ]; then
    # The service's user (User= in moraine-router.service): a system account without a home.
    if ! getent passwd moraine >/dev/null; then
        adduser --system --group --quiet --home /nonexistent --no-create-home moraine
    fi
    # Password hashes are for the router only, unless the administrator decided otherwise.
    if ! dpkg-statoverride --list /etc/moraine/passwords >/dev/null; then
        chown root:moraine /etc/moraine/passwords
        chmod 0640 /etc/moraine/passwords
    fi
    # Not enabled or started here: the router is configured first (users, endpoints). An
    # upgrade restarts a running router on the new binary.
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload >/dev/null || true
        systemctl try-restart moraine-router.service >/dev/null || true
    fi
fi
exit 0
]=])
file(WRITE ${moraine_staging}/prerm [=[#!/bin/sh
# moraine prerm (from cmake/packaging.cmake)
set -e
# A router left running would keep a deleted binary; stop it before its files go.
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
    systemctl stop moraine-router.service >/dev/null || true
fi
exit 0
]=])
file(WRITE ${moraine_staging}/postrm [=[#!/bin/sh
# moraine postrm (from cmake/packaging.cmake)
set -e
# Forget the removed unit. The moraine user stays (Debian keeps system users: files may still
# belong to it).
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload >/dev/null || true
fi
exit 0
]=])
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${moraine_staging}/conffiles ${moraine_staging}/postinst ${moraine_staging}/prerm ${moraine_staging}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_GENERATOR DEB)
include(CPack)
