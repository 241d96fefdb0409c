# Finds CUDA and NCCL under /usr/local/cuda (TROUPE_ENABLE_CUDA = AUTO, ON or OFF).
# Sets TROUPE_HAVE_CUDA / TROUPE_HAVE_NCCL (0 or 1) for build_config.hpp and,
# when CUDA is used, enables the CUDA language for the kernels under ops/cuda/.
# Included from the top-level CMakeLists.txt: enable_language must run there.
set(TROUPE_HAVE_CUDA 0)
set(TROUPE_HAVE_NCCL 0)
if(NOT TROUPE_ENABLE_CUDA STREQUAL "OFF")
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(TROUPE_HAVE_CUDA 1)
    find_library(TROUPE_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
    find_path(TROUPE_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
    if(TROUPE_NCCL_LIBRARY AND TROUPE_NCCL_INCLUDE_DIR)
      set(TROUPE_HAVE_NCCL 1)
      # An imported target, so that the exported troupe_core names it rather
      # than this machine's path; troupeConfig.cmake defines it again.
      if(NOT TARGET NCCL::nccl)
        add_library(NCCL::nccl UNKNOWN IMPORTED)
        set_target_properties(NCCL::nccl PROPERTIES
          IMPORTED_LOCATION ${TROUPE_NCCL_LIBRARY}
          INTERFACE_INCLUDE_DIRECTORIES ${TROUPE_NCCL_INCLUDE_DIR})
      endif()
    endif()
    message(STATUS "troupe: CUDA ${CUDAToolkit_VERSION} found; NCCL: ${TROUPE_HAVE_NCCL}")

    # The nvcc of the toolkit just found, not whichever one is first on PATH.
    if(NOT CMAKE_CUDA_COMPILER)
      if(CUDAToolkit_NVCC_EXECUTABLE)
        set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
      else()
        set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
      endif()
    endif()
    # nvcc compiles the host half of .cu files with the C++ compiler of the
    # .cpp files, so that both agree on the standard library's ABI.
    if(NOT CMAKE_CUDA_HOST_COMPILER)
      set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
    endif()
    # sm_90 machine code for the H100/H200 troupe runs on, plus compute_75 PTX
    # that the driver compiles for any other card from Turing (CUDA 13's
    # oldest) on. A -DCMAKE_CUDA_ARCHITECTURES=... or CUDAARCHS wins.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      set(CMAKE_CUDA_ARCHITECTURES "90-real;75-virtual" CACHE STRING "CUDA architectures to build for")
    endif()
    enable_language(CUDA)
    # nvcc has taken -std=c++20 since CUDA 12, but CMake learnt it only in 3.26:
    # tell an older CMake, so that the .cu files see the headers' C++20.
    if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION
       AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA" AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
    # As for C++ (the top-level CMakeLists.txt): no -g, to keep CI's build time.
    set(CMAKE_CUDA_FLAGS_RELWITHDEBINFO "-O2 -DNDEBUG" CACHE STRING "" FORCE)
    # troupe_core links the shared CUDA runtime; a second, static copy in the
    # targets with .cu files would keep its own device state.
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    if(TROUPE_CCACHE)
      set(CMAKE_CUDA_COMPILER_LAUNCHER ${TROUPE_CCACHE})
    endif()
  elseif(TROUPE_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TROUPE_ENABLE_CUDA=ON but no CUDA toolkit was found; "
                        "install it under /usr/local/cuda or configure with -DTROUPE_ENABLE_CUDA=OFF")
  else()
    message(STATUS "troupe: CUDA not found; GPU sources are skipped")
  endif()
endif()
