# Finds SimGrid and its SMPI tools. Debian's libsimgrid-dev ships no CMake config file.
#
# Sets SimGrid_FOUND, SimGrid_VERSION, SimGrid_INCLUDE_DIR, SimGrid_LIBRARY,
# SimGrid_SMPICXX, SimGrid_SMPIRUN, SimGrid_SMPI_INCLUDE_DIR (holds smpi_helpers.h),
# and the imported target SimGrid::SimGrid.

find_path(SimGrid_INCLUDE_DIR NAMES simgrid/s4u.hpp simgrid/version.h)
find_path(SimGrid_SMPI_INCLUDE_DIR NAMES smpi_helpers.h PATH_SUFFIXES smpi)
find_library(SimGrid_LIBRARY NAMES simgrid)
find_program(SimGrid_SMPICXX NAMES smpicxx)
find_program(SimGrid_SMPIRUN NAMES smpirun)

if(SimGrid_INCLUDE_DIR AND EXISTS "${SimGrid_INCLUDE_DIR}/simgrid/version.h")
  file(STRINGS "${SimGrid_INCLUDE_DIR}/simgrid/version.h" _sg_version_lines
       REGEX "#define SIMGRID_VERSION_(MAJOR|MINOR|PATCH)")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX MATCH "SIMGRID_VERSION_${_part} +([0-9]+)" _match "${_sg_version_lines}")
    set(_sg_${_part} "${CMAKE_MATCH_1}")
  endforeach()
  set(SimGrid_VERSION "${_sg_MAJOR}.${_sg_MINOR}")
  if(_sg_PATCH AND NOT _sg_PATCH STREQUAL "0")
    string(APPEND SimGrid_VERSION ".${_sg_PATCH}")
  endif()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SimGrid
  REQUIRED_VARS SimGrid_LIBRARY SimGrid_INCLUDE_DIR SimGrid_SMPI_INCLUDE_DIR
                SimGrid_SMPICXX SimGrid_SMPIRUN
  VERSION_VAR SimGrid_VERSION)

if(SimGrid_FOUND AND NOT TARGET SimGrid::SimGrid)
  add_library(SimGrid::SimGrid UNKNOWN IMPORTED)
  set_target_properties(SimGrid::SimGrid PROPERTIES
    IMPORTED_LOCATION "${SimGrid_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SimGrid_INCLUDE_DIR}")
endif()
mark_as_advanced(SimGrid_INCLUDE_DIR SimGrid_SMPI_INCLUDE_DIR SimGrid_LIBRARY SimGrid_SMPICXX
                 SimGrid_SMPIRUN)
