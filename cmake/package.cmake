# The Debian package of the binary (scripts/build-deb.sh, docs/packaging.md): CPack's DEB generator
# over the install rules below, so the package is made from the binary this build already has.
# /usr/bin/memfit, its man page (help2man, from the built binary's --help and each command's
# --help), bash completion (packaging/memfit.bash-completion: it asks `memfit <command> --help`
# for the flags, so it cannot drift from the CLI), the docs with a copyright file and a gzipped
# changelog under /usr/share/doc/memfit/.

include(GNUInstallDirs)
install(TARGETS memfit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT memfit)

find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(MEMFIT_MAN_PAGE ${CMAKE_BINARY_DIR}/package/memfit.1.gz)
  add_custom_command(
    OUTPUT ${MEMFIT_MAN_PAGE}
    COMMAND ${CMAKE_COMMAND} -DMEMFIT=$<TARGET_FILE:memfit> -DHELP2MAN=${HELP2MAN}
            -DVERSION=${PROJECT_VERSION} -DOUTPUT=${MEMFIT_MAN_PAGE}
            -P ${CMAKE_SOURCE_DIR}/cmake/man_page.cmake
    DEPENDS memfit ${CMAKE_SOURCE_DIR}/cmake/man_page.cmake
    COMMENT "Writing the man page from memfit --help (help2man)"
    VERBATIM)
  add_custom_target(memfit_man ALL DEPENDS ${MEMFIT_MAN_PAGE})
  install(FILES ${MEMFIT_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT memfit)
else()
  message(STATUS "help2man not found: the package has no man page (apt-get install help2man)")
endif()

# The changelog Debian policy asks for in a native package: gzipped, reproducible (gzip -n).
set(MEMFIT_CHANGELOG ${CMAKE_BINARY_DIR}/package/changelog.gz)
add_custom_command(
  OUTPUT ${MEMFIT_CHANGELOG}
  COMMAND sh -c "gzip -9nc '${CMAKE_SOURCE_DIR}/packaging/changelog' > '${MEMFIT_CHANGELOG}'"
  DEPENDS ${CMAKE_SOURCE_DIR}/packaging/changelog
  VERBATIM)
add_custom_target(memfit_changelog ALL DEPENDS ${MEMFIT_CHANGELOG})
install(FILES ${MEMFIT_CHANGELOG} ${CMAKE_SOURCE_DIR}/packaging/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT memfit)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/memfit.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME memfit
        COMPONENT memfit)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME memfit)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "memfit maintainers <maintainers@users.noreply.a-seed-fbbdb17c.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "memory an ML model needs to load, serve and train")
# CPack writes CPACK_PACKAGE_DESCRIPTION_SUMMARY as the synopsis, then this as the extended
# description (it indents the lines itself).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "memfit estimates from real model metadata (safetensors and GGUF headers,\nconfig.json) how much memory a model needs to load, to serve with an engine\nand to train, on which GPUs it fits and what to change when it does not,\nwithout Python and without downloading weights.")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # memfit_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)   # Depends from dpkg-shlibdeps: libcurl, libfmt, ...
set(CPACK_STRIP_FILES ON)                # RelWithDebInfo binaries carry debug info
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEB_COMPONENT_INSTALL OFF)
set(CPACK_COMPONENTS_ALL memfit)
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};memfit;memfit;/")
include(CPack)

# The package, checked without installing it: tests/package/deb_test.sh packs this build's binary
# with cpack into a temp dir, unpacks it with dpkg-deb -x and runs its usr/bin/memfit.
if(MEMFIT_BUILD_TESTS AND HELP2MAN AND NOT MEMFIT_SANITIZE AND NOT MEMFIT_FUZZ)
  find_program(DPKG_DEB dpkg-deb)
  if(DPKG_DEB)
    add_test(NAME deb_package
             COMMAND ${CMAKE_SOURCE_DIR}/tests/package/deb_test.sh ${CMAKE_BINARY_DIR}
                     ${PROJECT_VERSION})
    set_tests_properties(deb_package PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  endif()
endif()
