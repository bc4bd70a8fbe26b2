# Install rules: the headers, the shared and the static library, grb.pc
# and a CMake package (grbConfig.cmake, grbConfigVersion.cmake) with the
# targets grb::grb (shared) and grb::grb_static.
include(CMakePackageConfigHelpers)

install(TARGETS grb grb_static EXPORT grbTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Every header under include/grb, the inline fast path's impl/ included;
# nothing test-only lives there.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/grb
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")

install(EXPORT grbTargets
  NAMESPACE grb::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/grb)

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/grbConfig.cmake.in
  ${PROJECT_BINARY_DIR}/grbConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/grb)
# While the major version is 0 a minor version may break the API, so a
# request for 0.2 accepts 0.2.x only.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/grbConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/grbConfig.cmake
  ${PROJECT_BINARY_DIR}/grbConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/grb)

# pkg-config: `pkg-config --cflags --libs grb` links the shared library
# (to link the static one, name it: -l:libgrb.a, or use grb::grb_static).
# The prefix is found from where grb.pc is, so a tree installed with
# `cmake --install --prefix DIR` (or moved) still works.
set(GRB_PC_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(GRB_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(GRB_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(GRB_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH grb_pc_up "/x/${GRB_PC_DIR}" "/x")
  string(REGEX REPLACE "/$" "" grb_pc_up "${grb_pc_up}")
  set(GRB_PC_PREFIX "\${pcfiledir}/${grb_pc_up}")
  set(GRB_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(GRB_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/grb.pc.in
  ${PROJECT_BINARY_DIR}/grb.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/grb.pc DESTINATION ${GRB_PC_DIR})

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/grb)
