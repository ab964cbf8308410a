# HipattnAmdgpu.cmake -- compile HIP sources to AMDGPU code objects without ROCm.
#
# Uses the toolchain installed by .ci/amd-toolchain.sh (clang 21 + HIP
# headers + device libs, no GPU or HIP runtime needed).
#
#   include(HipattnAmdgpu)
#   if(HIPATTN_AMDGPU_FOUND)
#     hipattn_amdgpu_code_objects(NAME attn_isa
#       SOURCE   tests/isa/atoms.hip
#       TARGETS  gfx942 gfx950
#       INCLUDES ${PROJECT_SOURCE_DIR}/include
#       DEFINES  HIPATTN_FOO=1
#       [OPTIONS  <extra clang flags>...]     # default flags: -O3 -std=c++20
#       [DEPENDS  <extra files>...]
#       [CHECK_RESOURCES [ALLOW_SCRATCH]])
#   endif()
#
# For every gfx target it produces, in ${CMAKE_CURRENT_BINARY_DIR}:
#   <name>-<gfx>.co         the code object (clang -x hip --cuda-device-only)
#   <name>-<gfx>.notes.txt  llvm-readelf --notes (kernel resource metadata)
#   <name>-<gfx>.s          llvm-objdump -d --mcpu=<gfx>
#   <name>-<gfx>.manifest.txt  tools/kernel_manifest.py: one line per library kernel, its mangled
#                           symbol and its HIPATTN_KERNEL_MANIFEST fields (what the ISA checks, the
#                           model and the emulator tests find kernels by)
#   <name>-<gfx>.resources.txt  (CHECK_RESOURCES only) tools/amdgpu_resources.py
#                           table; the build fails if a kernel spills (or uses
#                           scratch, unless ALLOW_SCRATCH)
# and a custom target <name> (part of ALL) that builds them.  Header
# dependencies come from a clang depfile (user -I headers; the toolchain's
# system headers are not tracked).  The lists of outputs are returned in
# <name>_CODE_OBJECTS, <name>_NOTES, <name>_ASM and <name>_MANIFESTS (parent scope).
#
# Toolchain lookup (first match wins):
#   1. -DHIPATTN_AMD_CLANG=... (then also HIPATTN_AMD_READELF,
#      HIPATTN_AMD_OBJDUMP, HIPATTN_AMD_CXXFLAGS) given as cache variables;
#   2. <dir>/env.cmake, written by .ci/amd-toolchain.sh, where <dir> is
#      HIPATTN_AMD_TOOLCHAIN_DIR if non-empty, else the environment variable
#      of that name, else <repo>/.cache/amd-toolchain.
# HIPATTN_AMDGPU_FOUND tells whether a toolchain was found.

# ---------------------------------------------------------------------------
# Script mode: the build-time helper that writes the .notes.txt / .s files
# (custom commands cannot portably redirect stdout).
#   cmake -DHIPATTN_AMDGPU_DUMP=1 -DREADELF= -DOBJDUMP= -DGFX= -DCO= -DNOTES= -DASM= -P HipattnAmdgpu.cmake
# ---------------------------------------------------------------------------
if(CMAKE_SCRIPT_MODE_FILE AND HIPATTN_AMDGPU_DUMP)
  execute_process(COMMAND "${READELF}" --notes "${CO}"
                  OUTPUT_FILE "${NOTES}" RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    file(REMOVE "${NOTES}")
    message(FATAL_ERROR "llvm-readelf --notes ${CO} failed (${rc}): ${err}")
  endif()
  execute_process(COMMAND "${OBJDUMP}" -d "--mcpu=${GFX}" "${CO}"
                  OUTPUT_FILE "${ASM}" RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    file(REMOVE "${ASM}")
    message(FATAL_ERROR "llvm-objdump -d ${CO} failed (${rc}): ${err}")
  endif()
  return()
endif()

include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "HipattnAmdgpu needs CMake >= 3.20 (DEPFILE with Makefile generators)")
endif()

# Policies are recorded when the function below is defined.
if(POLICY CMP0116)
  cmake_policy(SET CMP0116 NEW)  # DEPFILE paths relative to the binary dir
endif()

set(_HIPATTN_AMDGPU_MODULE "${CMAKE_CURRENT_LIST_FILE}")
get_filename_component(_HIPATTN_AMDGPU_REPO "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(_HIPATTN_AMDGPU_RESOURCES_PY "${_HIPATTN_AMDGPU_REPO}/tools/amdgpu_resources.py")
set(_HIPATTN_AMDGPU_MANIFEST_PY "${_HIPATTN_AMDGPU_REPO}/tools/kernel_manifest.py")

# ---------------------------------------------------------------------------
# Toolchain discovery
# ---------------------------------------------------------------------------
# The toolchain dir: ${HIPATTN_AMD_TOOLCHAIN_DIR} if non-empty (cache or normal
# variable; the top-level CMakeLists may declare it empty), else the
# environment variable, else <repo>/.cache/amd-toolchain.
if(NOT "${HIPATTN_AMD_TOOLCHAIN_DIR}" STREQUAL "")
  set(_hipattn_amd_dir "${HIPATTN_AMD_TOOLCHAIN_DIR}")
elseif(NOT "$ENV{HIPATTN_AMD_TOOLCHAIN_DIR}" STREQUAL "")
  set(_hipattn_amd_dir "$ENV{HIPATTN_AMD_TOOLCHAIN_DIR}")
else()
  set(_hipattn_amd_dir "${_HIPATTN_AMDGPU_REPO}/.cache/amd-toolchain")
endif()
if(NOT DEFINED HIPATTN_AMD_TOOLCHAIN_DIR)
  set(HIPATTN_AMD_TOOLCHAIN_DIR "" CACHE PATH
      "Directory of the AMDGPU toolchain installed by .ci/amd-toolchain.sh (empty: the environment variable of that name, else <repo>/.cache/amd-toolchain)")
endif()

set(HIPATTN_AMDGPU_FOUND FALSE)
if(HIPATTN_AMD_CLANG)
  # Explicit -D cache variables.
  foreach(_v HIPATTN_AMD_READELF HIPATTN_AMD_OBJDUMP)
    if(NOT ${_v})
      message(FATAL_ERROR "HipattnAmdgpu: HIPATTN_AMD_CLANG is set, so ${_v} must be set too")
    endif()
  endforeach()
  set(HIPATTN_AMDGPU_FOUND TRUE)
elseif(EXISTS "${_hipattn_amd_dir}/env.cmake")
  # env.cmake sets HIPATTN_AMD_* (including HIPATTN_AMD_TOOLCHAIN_DIR) as
  # normal variables in this scope.
  include("${_hipattn_amd_dir}/env.cmake")
  # Re-configure when the toolchain is reinstalled.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_hipattn_amd_dir}/env.cmake")
  if(EXISTS "${HIPATTN_AMD_CLANG}")
    set(HIPATTN_AMDGPU_FOUND TRUE)
  endif()
endif()

if(HIPATTN_AMDGPU_FOUND)
  if(HIPATTN_AMD_CLANG_VERSION)  # from env.cmake
    message(STATUS "HipattnAmdgpu: clang ${HIPATTN_AMD_CLANG_VERSION} at ${HIPATTN_AMD_CLANG}"
                   " (HIP ${HIPATTN_AMD_HIP_VERSION}, rocPRIM ${HIPATTN_AMD_ROCPRIM_VERSION})")
  else()
    message(STATUS "HipattnAmdgpu: clang at ${HIPATTN_AMD_CLANG}")
  endif()
else()
  message(STATUS "HipattnAmdgpu: no AMDGPU toolchain in ${_hipattn_amd_dir} "
                 "(run: bash .ci/amd-toolchain.sh ${_hipattn_amd_dir})")
endif()

# The function may be called from any directory (the module is included once,
# globally), so it reads the toolchain from global properties.
set_property(GLOBAL PROPERTY _HIPATTN_AMDGPU_FOUND "${HIPATTN_AMDGPU_FOUND}")
set_property(GLOBAL PROPERTY _HIPATTN_AMDGPU_DIR "${_hipattn_amd_dir}")
set_property(GLOBAL PROPERTY _HIPATTN_AMDGPU_MODULE "${_HIPATTN_AMDGPU_MODULE}")
set_property(GLOBAL PROPERTY _HIPATTN_AMDGPU_RESOURCES_PY "${_HIPATTN_AMDGPU_RESOURCES_PY}")
set_property(GLOBAL PROPERTY _HIPATTN_AMDGPU_MANIFEST_PY "${_HIPATTN_AMDGPU_MANIFEST_PY}")
foreach(_v CLANG READELF OBJDUMP CXXFLAGS)
  set_property(GLOBAL PROPERTY _HIPATTN_AMDGPU_${_v} "${HIPATTN_AMD_${_v}}")
endforeach()

# ---------------------------------------------------------------------------
# hipattn_amdgpu_code_objects(NAME <name> SOURCE <file> TARGETS <gfx>...
#                             [INCLUDES <dir>...] [DEFINES <def>...]
#                             [OPTIONS <flag>...] [DEPENDS <file>...]
#                             [CHECK_RESOURCES [ALLOW_SCRATCH]])
# ---------------------------------------------------------------------------
function(hipattn_amdgpu_code_objects)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "CHECK_RESOURCES;ALLOW_SCRATCH" "NAME;SOURCE"
                        "TARGETS;INCLUDES;DEFINES;OPTIONS;DEPENDS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hipattn_amdgpu_code_objects: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_NAME OR NOT ARG_SOURCE OR NOT ARG_TARGETS)
    message(FATAL_ERROR "hipattn_amdgpu_code_objects: NAME, SOURCE and TARGETS are required")
  endif()
  foreach(v FOUND DIR MODULE RESOURCES_PY MANIFEST_PY CLANG READELF OBJDUMP CXXFLAGS)
    get_property(${v} GLOBAL PROPERTY _HIPATTN_AMDGPU_${v})
  endforeach()
  if(NOT FOUND)
    message(FATAL_ERROR "hipattn_amdgpu_code_objects(${ARG_NAME}): no AMDGPU toolchain found in "
                        "'${DIR}'. Run `bash .ci/amd-toolchain.sh` "
                        "(or set HIPATTN_AMD_TOOLCHAIN_DIR), or guard the call with "
                        "if(HIPATTN_AMDGPU_FOUND).")
  endif()

  get_filename_component(src "${ARG_SOURCE}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${src}")
    message(FATAL_ERROR "hipattn_amdgpu_code_objects(${ARG_NAME}): source '${src}' not found")
  endif()

  # -I (user includes, so their headers land in the depfile) and -D flags.
  set(flags)
  foreach(dir IN LISTS ARG_INCLUDES)
    get_filename_component(dir "${dir}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND flags "-I${dir}")
  endforeach()
  foreach(def IN LISTS ARG_DEFINES)
    list(APPEND flags "-D${def}")
  endforeach()
  set(extra_deps)
  foreach(dep IN LISTS ARG_DEPENDS)
    get_filename_component(dep "${dep}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND extra_deps "${dep}")
  endforeach()

  # the manifest step (every object) and the resource check run Python 3
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  if(ARG_CHECK_RESOURCES)
    set(check_flags)
    if(ARG_ALLOW_SCRATCH)
      set(check_flags --allow-scratch)
    endif()
  endif()

  set(outputs)
  set(code_objects)
  set(notes_files)
  set(asm_files)
  set(manifest_files)
  foreach(gfx IN LISTS ARG_TARGETS)
    set(base "${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}-${gfx}")
    set(co "${base}.co")
    set(depfile "${base}.d")

    # 1. HIP source -> code object.  clang ignores -MD/-MF for device-only
    #    HIP compiles, so the depfile is requested from cc1 directly.
    add_custom_command(
      OUTPUT "${co}"
      COMMAND "${CLANG}" -x hip "--offload-arch=${gfx}"
              --cuda-device-only --no-gpu-bundle-output
              -O3 -std=c++20 ${CXXFLAGS} ${flags} ${ARG_OPTIONS}
              -Xclang -dependency-file -Xclang "${depfile}" -Xclang -MT -Xclang "${co}"
              "${src}" -o "${co}"
      DEPENDS "${src}" ${extra_deps}
      DEPFILE "${depfile}"
      COMMENT "HIP device ${ARG_NAME} -> ${ARG_NAME}-${gfx}.co"
      VERBATIM COMMAND_EXPAND_LISTS)

    # 2. code object -> resource notes + disassembly.
    add_custom_command(
      OUTPUT "${base}.notes.txt" "${base}.s"
      COMMAND "${CMAKE_COMMAND}" -DHIPATTN_AMDGPU_DUMP=1
              "-DREADELF=${READELF}" "-DOBJDUMP=${OBJDUMP}"
              "-DGFX=${gfx}" "-DCO=${co}" "-DNOTES=${base}.notes.txt" "-DASM=${base}.s"
              -P "${MODULE}"
      DEPENDS "${co}" "${MODULE}"
      COMMENT "AMDGPU notes/disassembly ${ARG_NAME}-${gfx}"
      VERBATIM)
    list(APPEND outputs "${co}" "${base}.notes.txt" "${base}.s")
    list(APPEND code_objects "${co}")
    list(APPEND notes_files "${base}.notes.txt")
    list(APPEND asm_files "${base}.s")

    # 2b. code object -> kernel manifest (the HIPATTN_KERNEL_MANIFEST constants, read from the ELF);
    #     fails on a malformed manifest.
    add_custom_command(
      OUTPUT "${base}.manifest.txt"
      COMMAND "${Python3_EXECUTABLE}" "${MANIFEST_PY}" --output "${base}.manifest.txt" "${co}"
      DEPENDS "${co}" "${MANIFEST_PY}"
      COMMENT "AMDGPU kernel manifest ${ARG_NAME}-${gfx}"
      VERBATIM)
    list(APPEND outputs "${base}.manifest.txt")
    list(APPEND manifest_files "${base}.manifest.txt")

    # 3. optional: fail the build on spills / scratch.
    if(ARG_CHECK_RESOURCES)
      add_custom_command(
        OUTPUT "${base}.resources.txt"
        COMMAND "${Python3_EXECUTABLE}" "${RESOURCES_PY}" ${check_flags}
                --output "${base}.resources.txt" "${base}.notes.txt"
        DEPENDS "${base}.notes.txt" "${RESOURCES_PY}"
        COMMENT "AMDGPU resource check ${ARG_NAME}-${gfx}"
        VERBATIM)
      list(APPEND outputs "${base}.resources.txt")
    endif()
  endforeach()

  add_custom_target(${ARG_NAME} ALL DEPENDS ${outputs})
  set(${ARG_NAME}_CODE_OBJECTS "${code_objects}" PARENT_SCOPE)
  set(${ARG_NAME}_NOTES "${notes_files}" PARENT_SCOPE)
  set(${ARG_NAME}_ASM "${asm_files}" PARENT_SCOPE)
  set(${ARG_NAME}_MANIFESTS "${manifest_files}" PARENT_SCOPE)
endfunction()
