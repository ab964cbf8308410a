# hipattnInstances.cmake: build a program's unified-attention instances as a library (installed with
# the package; included by hipattnConfig.cmake and by this project's own CMakeLists.txt).
#
#   hipattn_add_unified_instances(<name>
#       [Q_DTYPES   f16 bf16]                    # query / output dtypes
#       [KV_KINDS   same16 e4m3fn e4m3fnuz e4m3fn_q8 e4m3fnuz_q8]  # KV cache storage (same16: the
#                                                # q dtype); the q8 kinds: fp8 queries and cache on
#                                                # the fp8 matrix path, e4m3fn_q8 for sm90 and gfx950,
#                                                # e4m3fnuz_q8 for gfx942 (skipped for other targets)
#       [HEAD_SIZES 64 96 128 192 256]           # default: every head size of the instance table
#       [VARIANTS   plain full]                  # plain: scale only; full: softcap / ALiBi / QQ-bias
#       [TARGETS    sm90 | gfx942 gfx950]        # default: sm90 with CUDA, gfx942 gfx950 with HIP
#       [LANGUAGE   CUDA | HIP]                  # default: the enabled one (CUDA first)
#       [CUDA_ARCHITECTURES 90a])                # default: HIPATTN_CUDA_ARCHITECTURES, else
#                                                # CMAKE_CUDA_ARCHITECTURES; sm90's instances build
#                                                # for 90a only (wgmma, setmaxnreg): others are refused
#
# Every field defaults to everything. The function writes one translation unit per instance
# (target x q dtype x KV kind x head size x variant: both tile kinds, the unified 2D and 3D kernels
# and their reduce, and the paged-decode kernel and its reduce: dispatch/paged_decode.hpp serves the
# same keys) and a registry translation unit listing them, and adds the static library <name> over
# them: they build in parallel. A program calls them through hipattn::prebuilt::unified_attention /
# paged_decode (hipattn/dispatch/prebuilt.hpp), defined by the registry translation unit: calling
# them without linking the library fails to link; a problem outside the built set throws
# hipattn::Error(unsupported, "instance") naming what was built.
#
# The library is position-independent (it links into shared objects, e.g. a Python extension; set
# the target's POSITION_INDEPENDENT_CODE OFF to opt out) and compiled with hidden visibility, its
# registry and entry points hidden: each executable or shared object links at most one instance
# library, and two shared objects of one process each keep their own. With CUDA the function also
# teaches CMake < 3.26 nvcc's C++20 flag in the calling directory (hipattn_cuda_std20), so the
# library and the caller's CUDA targets of that directory take CUDA_STANDARD 20.
include_guard(GLOBAL)

# After enable_language(CUDA): CMake 3.25 does not know the C++20 flag of nvcc 13 (nvcc has accepted
# -std=c++20 since 12.0). A macro: it sets the variables in the caller's scope.
macro(hipattn_cuda_std20)
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  if(NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
  endif()
endmacro()

# The head sizes of the instance table (problem/unified_instances.hpp), read from the header so the
# table stays the one list.
function(_hipattn_table_head_sizes out include_dir)
  set(_hdr "${include_dir}/hipattn/problem/unified_instances.hpp")
  if(NOT EXISTS "${_hdr}")
    message(FATAL_ERROR "hipattn_add_unified_instances: ${_hdr} not found")
  endif()
  file(STRINGS "${_hdr}" _line REGEX "head_sizes\\{[0-9, ]+\\}")
  string(REGEX MATCH "\\{([0-9, ]+)\\}" _m "${_line}")
  string(REPLACE " " "" _list "${CMAKE_MATCH_1}")
  string(REPLACE "," ";" _list "${_list}")
  if(NOT _list)
    message(FATAL_ERROR "hipattn_add_unified_instances: no head_sizes{...} line in ${_hdr}")
  endif()
  set(${out} ${_list} PARENT_SCOPE)
endfunction()

# Each value of `values` must be one of `allowed`.
function(_hipattn_check_values field values allowed)
  foreach(_v IN LISTS values)
    if(NOT _v IN_LIST allowed)
      string(REPLACE ";" ", " _a "${allowed}")
      message(FATAL_ERROR "hipattn_add_unified_instances: ${field} '${_v}' is not one of: ${_a}")
    endif()
  endforeach()
endfunction()

# The CUDA architectures of sm90's instances: `requested` (the CUDA_ARCHITECTURES argument), else
# HIPATTN_CUDA_ARCHITECTURES, else CMAKE_CUDA_ARCHITECTURES. The kernels use wgmma and setmaxnreg,
# which only the architecture-specific target 90a has: every entry must be 90a, 90a-real or
# 90a-virtual. Anything else (80, 90, 100a, native, all, nothing chosen) stops the configure with
# the value and the fix. Script mode can call it (tests/cmake/cuda_architectures.cmake).
function(hipattn_instance_cuda_architectures out requested)
  if(NOT "${requested}" STREQUAL "")
    set(_archs "${requested}")
    set(_from "CUDA_ARCHITECTURES")
  elseif(NOT "${HIPATTN_CUDA_ARCHITECTURES}" STREQUAL "")
    set(_archs "${HIPATTN_CUDA_ARCHITECTURES}")
    set(_from "HIPATTN_CUDA_ARCHITECTURES")
  else()
    set(_archs "${CMAKE_CUDA_ARCHITECTURES}")
    set(_from "CMAKE_CUDA_ARCHITECTURES")
  endif()
  if("${_archs}" STREQUAL "")
    message(FATAL_ERROR "hipattn_add_unified_instances: no CUDA architecture chosen (CUDA_ARCHITECTURES, "
                        "HIPATTN_CUDA_ARCHITECTURES and CMAKE_CUDA_ARCHITECTURES are empty); hipattn's sm90 "
                        "instances build for 90a: set CMAKE_CUDA_ARCHITECTURES=90a")
  endif()
  foreach(_a IN LISTS _archs)
    if(NOT _a MATCHES "^90a(-real|-virtual)?$")
      message(FATAL_ERROR "hipattn_add_unified_instances: ${_from} '${_archs}': architecture '${_a}' cannot "
                          "build hipattn's sm90 instances (they use wgmma and setmaxnreg, which only sm_90a has); "
                          "use 90a (or 90a-real / 90a-virtual), e.g. -DCMAKE_CUDA_ARCHITECTURES=90a")
    endif()
  endforeach()
  set(${out} "${_archs}" PARENT_SCOPE)
endfunction()

function(hipattn_add_unified_instances name)
  cmake_parse_arguments(PARSE_ARGV 1 A "" "LANGUAGE" "Q_DTYPES;KV_KINDS;HEAD_SIZES;VARIANTS;TARGETS;CUDA_ARCHITECTURES")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hipattn_add_unified_instances: unknown arguments: ${A_UNPARSED_ARGUMENTS}")
  endif()

  # The device language.
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT A_LANGUAGE)
    if("CUDA" IN_LIST _langs)
      set(A_LANGUAGE CUDA)
    elseif("HIP" IN_LIST _langs)
      set(A_LANGUAGE HIP)
    else()
      message(FATAL_ERROR "hipattn_add_unified_instances: enable CUDA or HIP first (enable_language / project LANGUAGES)")
    endif()
  endif()
  _hipattn_check_values(LANGUAGE "${A_LANGUAGE}" "CUDA;HIP")
  if(NOT A_LANGUAGE IN_LIST _langs)
    message(FATAL_ERROR "hipattn_add_unified_instances: LANGUAGE ${A_LANGUAGE} is not enabled")
  endif()

  # Defaults and checks of the filter.
  if(NOT HIPATTN_INCLUDE_DIR)
    message(FATAL_ERROR "hipattn_add_unified_instances: HIPATTN_INCLUDE_DIR is not set (use find_package(hipattn))")
  endif()
  _hipattn_table_head_sizes(_table_heads "${HIPATTN_INCLUDE_DIR}")
  if(A_LANGUAGE STREQUAL "CUDA")
    set(_lang_targets sm90)
  else()
    set(_lang_targets gfx942 gfx950)
  endif()
  if(NOT A_Q_DTYPES)
    set(A_Q_DTYPES f16 bf16)
  endif()
  if(NOT A_KV_KINDS)
    set(A_KV_KINDS same16 e4m3fn e4m3fnuz e4m3fn_q8 e4m3fnuz_q8)
  endif()
  if(NOT A_HEAD_SIZES)
    set(A_HEAD_SIZES ${_table_heads})
  endif()
  if(NOT A_VARIANTS)
    set(A_VARIANTS plain full)
  endif()
  if(NOT A_TARGETS)
    set(A_TARGETS ${_lang_targets})
  endif()
  _hipattn_check_values(Q_DTYPES "${A_Q_DTYPES}" "f16;bf16")
  _hipattn_check_values(KV_KINDS "${A_KV_KINDS}" "same16;e4m3fn;e4m3fnuz;e4m3fn_q8;e4m3fnuz_q8")
  _hipattn_check_values(HEAD_SIZES "${A_HEAD_SIZES}" "${_table_heads}")
  _hipattn_check_values(VARIANTS "${A_VARIANTS}" "plain;full")
  _hipattn_check_values(TARGETS "${A_TARGETS}" "${_lang_targets}")

  # One translation unit per instance, and the registry.
  if(A_LANGUAGE STREQUAL "CUDA")
    set(_ext cu)
  else()
    set(_ext hip)
  endif()
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  set(_sources)
  set(_decls "")
  set(_entries "")
  set(_pd_entries "")
  set(_summary_kinds "")
  foreach(_t IN LISTS A_TARGETS)
    set(_t_kinds "")
    foreach(_q IN LISTS A_Q_DTYPES)
      if(_q STREQUAL "bf16")
        set(_bf16 true)
      else()
        set(_bf16 false)
      endif()
      foreach(_kv IN LISTS A_KV_KINDS)
        # the fp8 matrix path: the q8 kind of the format the target's fp8 MMA reads
        # (numeric/kv_kind.hpp kv_kind_on_target)
        if((_kv STREQUAL "e4m3fn_q8" AND _t STREQUAL "gfx942") OR (_kv STREQUAL "e4m3fnuz_q8" AND NOT _t STREQUAL "gfx942"))
          continue()
        endif()
        if(NOT _kv IN_LIST _t_kinds)
          list(APPEND _t_kinds ${_kv})
        endif()
        foreach(_d IN LISTS A_HEAD_SIZES)
          foreach(_v IN LISTS A_VARIANTS)
            set(_args "${_t}, ${_bf16}, ${_kv}, ${_d}, ${_v}")
            set(_file "${_dir}/unified_${_t}_${_q}_${_kv}_d${_d}_${_v}.${_ext}")
            file(CONFIGURE OUTPUT "${_file}" CONTENT
"// Generated by hipattn_add_unified_instances(${name}): one instance of the unified-attention and
// paged-decode families.
#include \"hipattn/dispatch/prebuilt.hpp\"
HIPATTN_PREBUILT_INSTANCE(${_args})
" @ONLY)
            list(APPEND _sources "${_file}")
            string(APPEND _decls "HIPATTN_PREBUILT_EXTERN_INSTANCE(${_args})\n")
            string(APPEND _entries "      HIPATTN_UNIFIED_REGISTRY_ENTRY(${_args}),\n")
            string(APPEND _pd_entries "      HIPATTN_PAGED_DECODE_REGISTRY_ENTRY(${_args}),\n")
          endforeach()
        endforeach()
      endforeach()
    endforeach()
    string(REPLACE ";" " " _t_kinds "${_t_kinds}")
    string(APPEND _summary_kinds ", kv ${_t}: ${_t_kinds}")
  endforeach()
  file(CONFIGURE OUTPUT "${_dir}/registry.${_ext}" CONTENT
"// Generated by hipattn_add_unified_instances(${name}): the registry of this library's instances and
// the entry points over it (hipattn/dispatch/prebuilt.hpp), private to the module that links it.
#include \"hipattn/dispatch/prebuilt.hpp\"
${_decls}
namespace hipattn::prebuilt {
const std::vector<UnifiedPrebuiltInstance>& unified_instances() {
  static const std::vector<UnifiedPrebuiltInstance> kInstances{
${_entries}  };
  return kInstances;
}
const std::vector<PagedDecodePrebuiltInstance>& paged_decode_instances() {
  static const std::vector<PagedDecodePrebuiltInstance> kInstances{
${_pd_entries}  };
  return kInstances;
}
}  // namespace hipattn::prebuilt
HIPATTN_PREBUILT_ENTRY_POINTS()
" @ONLY)
  list(APPEND _sources "${_dir}/registry.${_ext}")

  add_library(${name} STATIC ${_sources})
  set_source_files_properties(${_sources} PROPERTIES LANGUAGE ${A_LANGUAGE})
  if(TARGET hipattn::hipattn)
    target_link_libraries(${name} PUBLIC hipattn::hipattn)
  else()
    target_link_libraries(${name} PUBLIC hipattn)
  endif()
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON VISIBILITY_INLINES_HIDDEN ON
                                           ${A_LANGUAGE}_VISIBILITY_PRESET hidden)
  if(A_LANGUAGE STREQUAL "CUDA")
    hipattn_instance_cuda_architectures(_archs "${A_CUDA_ARCHITECTURES}")
    hipattn_cuda_std20()
    foreach(_v CMAKE_CUDA20_STANDARD_COMPILE_OPTION CMAKE_CUDA20_EXTENSION_COMPILE_OPTION CMAKE_CUDA_COMPILE_FEATURES)
      set(${_v} "${${_v}}" PARENT_SCOPE)  # the caller's directory: where the targets are generated
    endforeach()
    set_target_properties(${name} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON CUDA_ARCHITECTURES "${_archs}")
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
    set(_where "CUDA ${_archs}")
  else()
    if(A_CUDA_ARCHITECTURES)
      message(FATAL_ERROR "hipattn_add_unified_instances: CUDA_ARCHITECTURES '${A_CUDA_ARCHITECTURES}' given to a HIP library")
    endif()
    set_target_properties(${name} PROPERTIES HIP_STANDARD 20 HIP_STANDARD_REQUIRED ON HIP_ARCHITECTURES "${A_TARGETS}")
    set(_where "HIP")
  endif()
  list(LENGTH _sources _n)
  math(EXPR _n "${_n} - 1")
  string(REPLACE ";" " " _summary "targets ${A_TARGETS}, q ${A_Q_DTYPES}${_summary_kinds}, d ${A_HEAD_SIZES}, variants ${A_VARIANTS}")
  message(STATUS "hipattn: ${name}: ${_n} unified-attention instances (${_where}: ${_summary})")
endfunction()
