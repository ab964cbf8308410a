# hipattnInstances.cmake: build a program's instances of every family as a library (installed with
# the package; included by hipattnConfig.cmake and by this project's own CMakeLists.txt).
#
#   hipattn_add_instances(<name>
#       [FAMILIES   unified paged_decode mla_decode dense_prefill]
#       [Q_DTYPES   f16 bf16]                    # query / output dtypes
#       [KV_KINDS   same16 e4m3fn e4m3fnuz e4m3fn_q8 e4m3fnuz_q8]  # KV cache storage (same16: the
#                                                # q dtype); the q8 kinds: fp8 queries and cache on
#                                                # the fp8 matrix path, the format a target's fp8
#                                                # MMA reads (rows of other targets do not exist)
#       [HEAD_SIZES 64 96 128 192 256 576]       # d_qk (dense prefill's 192 is (192, 128), MLA's
#                                                # 576 is (576, 512))
#       [VARIANTS   plain full softcap]          # plain: scale only; full: softcap / ALiBi / QQ-bias
#                                                # (unified, paged decode); softcap (dense prefill)
#       [TARGETS    sm90 | gfx942 gfx950]        # default: sm90 with CUDA, gfx942 gfx950 with HIP
#       [LANGUAGE   CUDA | HIP]                  # default: the enabled one (CUDA first)
#       [CUDA_ARCHITECTURES 90a])                # default: HIPATTN_CUDA_ARCHITECTURES, else
#                                                # CMAKE_CUDA_ARCHITECTURES; sm90's instances build
#                                                # for 90a only (wgmma, setmaxnreg): others are refused
#
# The instances are the rows of the instance table (cmake/hipattnInstanceTable.cmake, generated with
# include/hipattn/problem/instance_table.hpp by tools/instance_table.py) whose fields are all among
# the arguments; every argument defaults to everything. The function writes one translation unit per
# row (unified: both tile kinds, the 2D and 3D kernels and their reduce; paged decode: its kernel,
# planner and reduce; MLA: its kernel, planner and reduce; dense prefill: the target's kernels) and a
# registry translation unit listing them, and adds the static library <name> over them: they build in
# parallel. A program calls them through hipattn::prebuilt::unified_attention / paged_decode /
# mla_decode / dense_prefill (hipattn/dispatch/prebuilt.hpp), defined by the registry translation
# unit: calling them without linking the library fails to link; a problem outside the built set
# throws hipattn::Error(unsupported, "instance") naming what was built.
# hipattn_add_unified_instances(<name> ...) is hipattn_add_instances(<name> FAMILIES unified
# paged_decode ...), the first release's name, kept for one release.
#
# The library is position-independent (it links into shared objects, e.g. a Python extension; set
# the target's POSITION_INDEPENDENT_CODE OFF to opt out) and compiled with hidden visibility, its
# registry and entry points hidden: each executable or shared object links at most one instance
# library, and two shared objects of one process each keep their own. With CUDA the function also
# teaches CMake < 3.26 nvcc's C++20 flag in the calling directory (hipattn_cuda_std20), so the
# library and the caller's CUDA targets of that directory take CUDA_STANDARD 20.
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/hipattnInstanceTable.cmake")

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

# Each value of `values` must be one of `allowed`.
function(_hipattn_check_values field values allowed)
  foreach(_v IN LISTS values)
    if(NOT _v IN_LIST allowed)
      string(REPLACE ";" ", " _a "${allowed}")
      message(FATAL_ERROR "hipattn_add_instances: ${field} '${_v}' is not one of: ${_a}")
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
    message(FATAL_ERROR "hipattn_add_instances: no CUDA architecture chosen (CUDA_ARCHITECTURES, "
                        "HIPATTN_CUDA_ARCHITECTURES and CMAKE_CUDA_ARCHITECTURES are empty); hipattn's sm90 "
                        "instances build for 90a: set CMAKE_CUDA_ARCHITECTURES=90a")
  endif()
  foreach(_a IN LISTS _archs)
    if(NOT _a MATCHES "^90a(-real|-virtual)?$")
      message(FATAL_ERROR "hipattn_add_instances: ${_from} '${_archs}': architecture '${_a}' cannot "
                          "build hipattn's sm90 instances (they use wgmma and setmaxnreg, which only sm_90a has); "
                          "use 90a (or 90a-real / 90a-virtual), e.g. -DCMAKE_CUDA_ARCHITECTURES=90a")
    endif()
  endforeach()
  set(${out} "${_archs}" PARENT_SCOPE)
endfunction()

function(hipattn_add_instances name)
  cmake_parse_arguments(PARSE_ARGV 1 A "" "LANGUAGE"
                        "FAMILIES;Q_DTYPES;KV_KINDS;HEAD_SIZES;VARIANTS;TARGETS;CUDA_ARCHITECTURES")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hipattn_add_instances: unknown arguments: ${A_UNPARSED_ARGUMENTS}")
  endif()

  # The device language.
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT A_LANGUAGE)
    if("CUDA" IN_LIST _langs)
      set(A_LANGUAGE CUDA)
    elseif("HIP" IN_LIST _langs)
      set(A_LANGUAGE HIP)
    else()
      message(FATAL_ERROR "hipattn_add_instances: enable CUDA or HIP first (enable_language / project LANGUAGES)")
    endif()
  endif()
  _hipattn_check_values(LANGUAGE "${A_LANGUAGE}" "CUDA;HIP")
  if(NOT A_LANGUAGE IN_LIST _langs)
    message(FATAL_ERROR "hipattn_add_instances: LANGUAGE ${A_LANGUAGE} is not enabled")
  endif()

  # Defaults and checks of the filter: the table's values (hipattnInstanceTable.cmake).
  if(A_LANGUAGE STREQUAL "CUDA")
    set(_lang_targets sm90)
  else()
    set(_lang_targets gfx942 gfx950)
  endif()
  set(_all_q) 
  set(_all_kv)
  set(_all_d)
  set(_all_v)
  foreach(_row IN LISTS HIPATTN_INSTANCE_TABLE)
    string(REPLACE "|" ";" _f "${_row}")
    list(GET _f 2 _q)
    list(GET _f 3 _kv)
    list(GET _f 4 _d)
    list(GET _f 6 _v)
    foreach(_pair "_all_q;${_q}" "_all_kv;${_kv}" "_all_d;${_d}" "_all_v;${_v}")
      list(GET _pair 0 _list)
      list(GET _pair 1 _value)
      if(NOT _value IN_LIST ${_list})
        list(APPEND ${_list} ${_value})
      endif()
    endforeach()
  endforeach()
  foreach(_field FAMILIES Q_DTYPES KV_KINDS HEAD_SIZES VARIANTS TARGETS)
    set(_allowed_FAMILIES ${HIPATTN_INSTANCE_FAMILIES})
    set(_allowed_Q_DTYPES ${_all_q})
    set(_allowed_KV_KINDS ${_all_kv})
    set(_allowed_HEAD_SIZES ${_all_d})
    set(_allowed_VARIANTS ${_all_v})
    set(_allowed_TARGETS ${_lang_targets})
    if(NOT A_${_field})
      set(A_${_field} ${_allowed_${_field}})
    endif()
    _hipattn_check_values(${_field} "${A_${_field}}" "${_allowed_${_field}}")
  endforeach()

  # One translation unit per row the arguments select, and the registry.
  if(A_LANGUAGE STREQUAL "CUDA")
    set(_ext cu)
  else()
    set(_ext hip)
  endif()
  set(_dir "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  set(_sources)
  set(_decls "")
  foreach(_fam IN LISTS HIPATTN_INSTANCE_FAMILIES)
    set(_entries_${_fam} "")
    set(_count_${_fam} 0)
  endforeach()
  set(_summary "")
  foreach(_row IN LISTS HIPATTN_INSTANCE_TABLE)
    string(REPLACE "|" ";" _f "${_row}")
    list(GET _f 0 _fam)
    list(GET _f 1 _t)
    list(GET _f 2 _q)
    list(GET _f 3 _kv)
    list(GET _f 4 _d)
    list(GET _f 5 _dv)
    list(GET _f 6 _v)
    if(NOT _fam IN_LIST A_FAMILIES OR NOT _t IN_LIST A_TARGETS OR NOT _q IN_LIST A_Q_DTYPES OR
       NOT _kv IN_LIST A_KV_KINDS OR NOT _d IN_LIST A_HEAD_SIZES OR NOT _v IN_LIST A_VARIANTS)
      continue()
    endif()
    if(_q STREQUAL "bf16")
      set(_bf16 true)
    else()
      set(_bf16 false)
    endif()
    set(_args "${_fam}, ${_t}, ${_bf16}, ${_kv}, ${_d}, ${_dv}, ${_v}")
    set(_file "${_dir}/${_fam}_${_t}_${_q}_${_kv}_d${_d}_${_dv}_${_v}.${_ext}")
    file(CONFIGURE OUTPUT "${_file}" CONTENT
"// Generated by hipattn_add_instances(${name}): one row of the instance table.
#include \"hipattn/dispatch/prebuilt.hpp\"
HIPATTN_INSTANCE(${_args})
" @ONLY)
    list(APPEND _sources "${_file}")
    string(APPEND _decls "HIPATTN_EXTERN_INSTANCE(${_args})\n")
    string(APPEND _entries_${_fam} "      HIPATTN_REGISTRY_ENTRY(${_args}),\n")
    math(EXPR _count_${_fam} "${_count_${_fam}} + 1")
  endforeach()
  set(_lists "")
  set(_fn_unified unified_instances)
  set(_fn_paged_decode paged_decode_instances)
  set(_fn_mla_decode mla_decode_instances)
  set(_fn_dense_prefill dense_prefill_instances)
  set(_type_unified UnifiedLaunchFn)
  set(_type_paged_decode PagedDecodeLaunchFn)
  set(_type_mla_decode MlaDecodeLaunchFn)
  set(_type_dense_prefill DensePrefillLaunchFn)
  foreach(_fam IN LISTS HIPATTN_INSTANCE_FAMILIES)
    string(APPEND _lists
"std::span<const InstanceEntry<detail::${_type_${_fam}}>> ${_fn_${_fam}}() {
  static constexpr std::array<InstanceEntry<detail::${_type_${_fam}}>, ${_count_${_fam}}> kEntries{{
${_entries_${_fam}}  }};
  return kEntries;
}
")
    if(_count_${_fam} GREATER 0)
      string(APPEND _summary "; ${_fam} ${_count_${_fam}}")
    endif()
  endforeach()
  file(CONFIGURE OUTPUT "${_dir}/registry.${_ext}" CONTENT
"// Generated by hipattn_add_instances(${name}): the registry of this library's instances and the
// entry points over it (hipattn/dispatch/prebuilt.hpp), private to the module that links it.
#include <array>
#include \"hipattn/dispatch/prebuilt.hpp\"
${_decls}
namespace hipattn::prebuilt {
${_lists}}  // namespace hipattn::prebuilt
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
      message(FATAL_ERROR "hipattn_add_instances: CUDA_ARCHITECTURES '${A_CUDA_ARCHITECTURES}' given to a HIP library")
    endif()
    set_target_properties(${name} PROPERTIES HIP_STANDARD 20 HIP_STANDARD_REQUIRED ON HIP_ARCHITECTURES "${A_TARGETS}")
    set(_where "HIP")
  endif()
  list(LENGTH _sources _n)
  math(EXPR _n "${_n} - 1")
  string(REPLACE ";" " " _sel "targets ${A_TARGETS}, q ${A_Q_DTYPES}, kv ${A_KV_KINDS}, d ${A_HEAD_SIZES}, variants ${A_VARIANTS}")
  string(SUBSTRING "${_summary}" 2 -1 _summary)
  message(STATUS "hipattn: ${name}: ${_n} instances (${_where}: ${_summary}; of ${_sel})")
endfunction()

# The name of the first release, when the library held unified attention and paged decode only: an
# alias of hipattn_add_instances(FAMILIES unified paged_decode ...), kept for one release.
function(hipattn_add_unified_instances name)
  hipattn_add_instances(${name} FAMILIES unified paged_decode ${ARGN})
  foreach(_v CMAKE_CUDA20_STANDARD_COMPILE_OPTION CMAKE_CUDA20_EXTENSION_COMPILE_OPTION CMAKE_CUDA_COMPILE_FEATURES)
    set(${_v} "${${_v}}" PARENT_SCOPE)
  endforeach()
endfunction()
