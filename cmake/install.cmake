# The C++ libraries for C++ users (component dev): static libraries, their public headers and
# a relocatable CMake package `spyre_sim` (spyre_simConfig.cmake) whose targets carry their
# dependencies (yaml-cpp, nlohmann_json, SystemC through pkg-config, Boost's headers).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SPYRE_EXPORTED_LIBS spyre_isa spyre_traces spyre_sim_model spyre_compiler spyre_runner)
set_target_properties(spyre_isa PROPERTIES EXPORT_NAME isa)
set_target_properties(spyre_traces PROPERTIES EXPORT_NAME traces)
set_target_properties(spyre_sim_model PROPERTIES EXPORT_NAME sim)
set_target_properties(spyre_compiler PROPERTIES EXPORT_NAME compiler)
set_target_properties(spyre_runner PROPERTIES EXPORT_NAME runner)

install(TARGETS ${SPYRE_EXPORTED_LIBS} EXPORT spyre_sim_targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
foreach(dir isa/include traces/include sim/include compiler/include tools/runner/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT dev FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
endforeach()

set(SPYRE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/spyre_sim)
install(EXPORT spyre_sim_targets NAMESPACE spyre:: DESTINATION ${SPYRE_CMAKE_DIR}
  COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/spyre_simConfig.cmake.in
  ${PROJECT_BINARY_DIR}/spyre_simConfig.cmake INSTALL_DESTINATION ${SPYRE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/spyre_simConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/spyre_simConfig.cmake
  ${PROJECT_BINARY_DIR}/spyre_simConfigVersion.cmake DESTINATION ${SPYRE_CMAKE_DIR}
  COMPONENT dev)
