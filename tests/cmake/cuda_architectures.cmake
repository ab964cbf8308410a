# cmake -DARCHS=<list> [-DFROM=HIPATTN|CMAKE] -P tests/cmake/cuda_architectures.cmake
# Runs hipattn_instance_cuda_architectures (cmake/hipattnInstances.cmake) on ARCHS given as the
# function's argument (FROM unset), as HIPATTN_CUDA_ARCHITECTURES (FROM=HIPATTN) or as
# CMAKE_CUDA_ARCHITECTURES (FROM=CMAKE), and prints the architectures it accepts; a refusal stops
# with its message. tests/CMakeLists.txt matches the output of each case.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/hipattnInstances.cmake)
string(REPLACE "," ";" ARCHS "${ARCHS}")
if(FROM STREQUAL "HIPATTN")
  set(HIPATTN_CUDA_ARCHITECTURES "${ARCHS}")
  set(CMAKE_CUDA_ARCHITECTURES 52)  # the consumer's setting is overridden by HIPATTN_CUDA_ARCHITECTURES
  hipattn_instance_cuda_architectures(out "")
elseif(FROM STREQUAL "CMAKE")
  set(CMAKE_CUDA_ARCHITECTURES "${ARCHS}")
  hipattn_instance_cuda_architectures(out "")
else()
  hipattn_instance_cuda_architectures(out "${ARCHS}")
endif()
message("accepted: ${out}")
