# Finds FANN 2.2 (Debian libfann-dev), the peer that wulf's speed is compared against.
# Sets FANN_FOUND and the imported target FANN::float (the single-precision library,
# used with floatfann.h).

find_path(FANN_INCLUDE_DIR NAMES floatfann.h)
find_library(FANN_FLOAT_LIBRARY NAMES floatfann)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FANN REQUIRED_VARS FANN_FLOAT_LIBRARY FANN_INCLUDE_DIR)

if(FANN_FOUND AND NOT TARGET FANN::float)
  add_library(FANN::float UNKNOWN IMPORTED)
  set_target_properties(FANN::float PROPERTIES
    IMPORTED_LOCATION "${FANN_FLOAT_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${FANN_INCLUDE_DIR}")
endif()
mark_as_advanced(FANN_INCLUDE_DIR FANN_FLOAT_LIBRARY)
