# One helper per repeated target shape.
#
# vw_layer(NAME DEPS ...)
#   Builds a static library NAME from every *.cpp in the calling folder except *_test.cpp,
#   *_oracle.cpp and *_bench.cpp, and one GoogleTest program NAME_test from the *_test.cpp files
#   and the *_oracle.cpp ones (reference implementations the tests compare the library with),
#   registered with CTest, so a folder's CMakeLists.txt is one line. Tests run with the source root
#   as working dir and see VRAMWATCH_SOURCE_DIR, VRAMWATCH_SHARED_DATA and VRAMWATCH_BINARY_DIR as
#   compile-time definitions.
function(vw_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS;TEST_DEPS" ${ARGN})
  file(GLOB _all CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cpp")
  set(_lib_src "")
  set(_test_src "")
  foreach(f IN LISTS _all)
    if(f MATCHES "_(test|oracle)\\.cpp$")
      list(APPEND _test_src "${f}")
    elseif(NOT f MATCHES "_bench\\.cpp$")
      list(APPEND _lib_src "${f}")
    endif()
  endforeach()
  if(_lib_src)
    add_library(${name} STATIC ${_lib_src})
  else()
    add_library(${name} INTERFACE)
  endif()
  if(_lib_src)
    target_include_directories(${name} PUBLIC "${CMAKE_SOURCE_DIR}/src")
    target_link_libraries(${name} PUBLIC ${ARG_DEPS})
    vw_warnings(${name})
  else()
    target_include_directories(${name} INTERFACE "${CMAKE_SOURCE_DIR}/src")
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
  if(VRAMWATCH_BUILD_TESTS AND _test_src)
    vw_test(${name}_test SOURCES ${_test_src} DEPS ${name} ${ARG_TEST_DEPS})
  endif()
endfunction()

# vw_test(NAME SOURCES ... DEPS ...): one GoogleTest program, registered test by test.
function(vw_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    VRAMWATCH_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    VRAMWATCH_BINARY_DIR="${CMAKE_BINARY_DIR}"
    VRAMWATCH_SHARED_DATA="${VRAMWATCH_SHARED_DATA}"
    VRAMWATCH_PYTHON="${VRAMWATCH_PYTHON}")
  vw_warnings(${name})
  gtest_discover_tests(${name} WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}" DISCOVERY_TIMEOUT 60)
endfunction()

function(vw_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wno-missing-field-initializers)
endfunction()

include(GoogleTest OPTIONAL)
