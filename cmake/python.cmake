# The Python module memfit (docs/python.md): src/python/module.cc (pybind11, Debian's pybind11-dev)
# links the same static libraries as the binary and the tests (the whole build is -fPIC), so
# scripts/test.sh builds it with them. ${CMAKE_BINARY_DIR}/python/memfit/ is the importable
# package: python/memfit/*.py, the extension _memfit.<abi>.so and __init__.pyi, the type stubs
# written from the option table by python/gen_stubs.py once the extension is built.
option(MEMFIT_BUILD_PYTHON "Build the Python module memfit when pybind11 is found" ON)
# Debian's pybind11 and pytest are for Debian's interpreter, not a pyenv one earlier on PATH.
set(MEMFIT_PYTHON /usr/bin/python3 CACHE FILEPATH "The Python the module is built and tested for")

# Not under the sanitizers or libFuzzer: Python cannot load a module built with ASan unless the
# interpreter itself preloads its runtime (scripts/sanitize.sh builds only memfit, memfit_tests).
if(MEMFIT_SANITIZE OR MEMFIT_FUZZ)
  set(MEMFIT_BUILD_PYTHON OFF)
endif()
if(MEMFIT_BUILD_PYTHON)
  # pybind11's classic FindPythonLibsNew reads PYTHON_EXECUTABLE and leaves Python3_* (the
  # validation test's interpreter) alone.
  set(PYTHON_EXECUTABLE ${MEMFIT_PYTHON})
  find_package(pybind11 2.6 CONFIG QUIET)
  if(NOT pybind11_FOUND)
    message(STATUS "pybind11 not found (apt-get install pybind11-dev python3-dev): no Python module")
  endif()
endif()

if(MEMFIT_BUILD_PYTHON AND pybind11_FOUND)
  set(MEMFIT_PYTHON_PACKAGE ${CMAKE_BINARY_DIR}/python/memfit)
  # NO_EXTRAS: no LTO and no strip here (the wheel is stripped by scripts/build-python.sh).
  set(MEMFIT_PYTHON_SOURCES ${CMAKE_SOURCE_DIR}/src/python/module.cc)
  pybind11_add_module(memfit_python MODULE NO_EXTRAS ${MEMFIT_PYTHON_SOURCES})
  set_target_properties(memfit_python PROPERTIES OUTPUT_NAME _memfit
                        LIBRARY_OUTPUT_DIRECTORY ${MEMFIT_PYTHON_PACKAGE}
                        CXX_VISIBILITY_PRESET hidden)
  target_include_directories(memfit_python PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(memfit_python PRIVATE memfit_app)
  target_compile_definitions(memfit_python PRIVATE MEMFIT_VERSION="${PROJECT_VERSION}")

  file(GLOB MEMFIT_PYTHON_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/python/memfit/*.py
       ${CMAKE_SOURCE_DIR}/python/memfit/py.typed)
  set(copied)
  foreach(f ${MEMFIT_PYTHON_FILES})
    get_filename_component(name ${f} NAME)
    add_custom_command(OUTPUT ${MEMFIT_PYTHON_PACKAGE}/${name}
                       COMMAND ${CMAKE_COMMAND} -E copy ${f} ${MEMFIT_PYTHON_PACKAGE}/${name}
                       DEPENDS ${f} VERBATIM)
    list(APPEND copied ${MEMFIT_PYTHON_PACKAGE}/${name})
  endforeach()
  add_custom_command(
    OUTPUT ${MEMFIT_PYTHON_PACKAGE}/__init__.pyi
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${CMAKE_BINARY_DIR}/python
            ${MEMFIT_PYTHON} ${CMAKE_SOURCE_DIR}/python/gen_stubs.py ${MEMFIT_PYTHON_PACKAGE}/__init__.pyi
    DEPENDS memfit_python ${copied} ${CMAKE_SOURCE_DIR}/python/gen_stubs.py
    COMMENT "Writing memfit/__init__.pyi from the option table"
    VERBATIM)
  add_custom_target(memfit_python_package ALL DEPENDS ${copied} ${MEMFIT_PYTHON_PACKAGE}/__init__.pyi)

  if(MEMFIT_BUILD_TESTS)
    enable_testing()
    execute_process(COMMAND ${MEMFIT_PYTHON} -c "import pytest" RESULT_VARIABLE no_pytest
                    OUTPUT_QUIET ERROR_QUIET)
    if(no_pytest EQUAL 0)
      add_test(NAME python_tests
               COMMAND ${MEMFIT_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_SOURCE_DIR}/python/tests)
      set_tests_properties(python_tests PROPERTIES TIMEOUT 900 ENVIRONMENT
        "PYTHONPATH=${CMAKE_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1;MEMFIT_BINARY=$<TARGET_FILE:memfit>")
      # The wheel from this build's package, installed into a venv (tests/package/wheel_test.sh).
      add_test(NAME python_wheel
               COMMAND ${CMAKE_SOURCE_DIR}/tests/package/wheel_test.sh ${CMAKE_BINARY_DIR} ${PROJECT_VERSION})
      set_tests_properties(python_wheel PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
    else()
      message(STATUS "pytest not found for ${MEMFIT_PYTHON} (apt-get install python3-pytest): no python_tests")
    endif()
  endif()
endif()
