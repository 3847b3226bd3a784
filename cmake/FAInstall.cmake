# What `cmake --install build --prefix <prefix>` puts under <prefix>:
#   include/fa/..., fa-c/...   the C++ and C headers, .td and .def files, and the
#                               TableGen-generated .inc files
#   lib/libFA*.a                the libraries
#   bin/fa-opt                  the driver
#   lib/FAPlugin.so             fa as a dialect + pass plugin of mlir-opt-22
#                               (target FA::FAPlugin; docs/Embedding.md)
#   lib/libfa_cuda_runtime.so   the mgpu* entry points that gpu-to-llvm's host
#                               code calls (target FA::fa_cuda_runtime, when
#                               cuda.h was found; docs/Embedding.md)
#   lib/cmake/fa/FAConfig.cmake the package: find_package(FA CONFIG) with
#                               -DFA_DIR=<prefix>/lib/cmake/fa gives the
#                               targets FA::<library> and FA::fa-opt
# The libraries are static and link MLIR the way fa-opt does (fa-opt links
# libMLIR.so); a consumer links FA::FARegistration (or a smaller set, such as
# FA::FARegistrationCPU for the CPU pipeline alone) and MLIR, as
# examples/embedding/CMakeLists.txt does.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(FA_LIBRARIES
  FAAttentionDialect
  FAAttentionUtils
  FAAttentionTransforms
  FAAttentionToNVGPU
  FAPipelinesCPU
  FAPipelinesGPU
  FAPipelines
  FARegistrationCPU
  FARegistration
  FACAPI
)
set(FA_INSTALL_PACKAGE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/fa")

# Installed consumers find fa's headers (and MLIR's, which fa's headers
# include) through the targets.
foreach(lib ${FA_LIBRARIES})
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    "$<INSTALL_INTERFACE:${MLIR_INCLUDE_DIRS}>")
endforeach()

install(TARGETS ${FA_LIBRARIES}
  EXPORT FATargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# fa-opt finds libMLIR.so where the build found it.
set_target_properties(fa-opt PROPERTIES
  INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
install(TARGETS fa-opt
  EXPORT FATargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The plugin: loaded by mlir-opt-22, which has libMLIR.so loaded already; the
# run path is for ldd and for hosts that load it before libMLIR.so.
set_target_properties(FAPlugin PROPERTIES
  INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
install(TARGETS FAPlugin
  EXPORT FATargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# The CUDA runtime library (lib/Runtime, when cuda.h was found): plain C++
# over a dlopened libcuda, needing neither MLIR nor a run path.
if(TARGET fa_cuda_runtime)
  install(TARGETS fa_cuda_runtime
    EXPORT FATargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/fa" "${PROJECT_SOURCE_DIR}/include/fa-c"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING
  PATTERN "*.h" PATTERN "*.td" PATTERN "*.def" PATTERN "*.inc"
  PATTERN "CMakeLists.txt" EXCLUDE)
install(DIRECTORY "${PROJECT_BINARY_DIR}/include/fa"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

install(EXPORT FATargets
  NAMESPACE FA::
  DESTINATION ${FA_INSTALL_PACKAGE_DIR})
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/FAConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/FAConfig.cmake"
  INSTALL_DESTINATION ${FA_INSTALL_PACKAGE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/cmake/FAConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/cmake/FAConfig.cmake"
  "${PROJECT_BINARY_DIR}/cmake/FAConfigVersion.cmake"
  DESTINATION ${FA_INSTALL_PACKAGE_DIR})
