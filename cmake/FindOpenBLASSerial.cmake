# Finds OpenBLAS built without threads (Debian libopenblas-serial-dev), which Eigen calls for
# its matrix products when EIGEN_USE_BLAS is defined (core/CMakeLists.txt). The serial build
# matters: every rank is one process (mpirun) or one of many contexts on one core
# (smpirun), and a threaded OpenBLAS would start as many threads as the machine has cores
# in each of them. Sets OpenBLASSerial_FOUND and the imported target OpenBLAS::serial.

find_library(OpenBLASSerial_LIBRARY NAMES openblas
             PATHS /usr/lib/x86_64-linux-gnu/openblas-serial /usr/lib/aarch64-linux-gnu/openblas-serial
                   "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-serial"
             NO_DEFAULT_PATH)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenBLASSerial REQUIRED_VARS OpenBLASSerial_LIBRARY)

if(OpenBLASSerial_FOUND AND NOT TARGET OpenBLAS::serial)
  add_library(OpenBLAS::serial UNKNOWN IMPORTED)
  set_target_properties(OpenBLAS::serial PROPERTIES IMPORTED_LOCATION "${OpenBLASSerial_LIBRARY}")
endif()
mark_as_advanced(OpenBLASSerial_LIBRARY)
