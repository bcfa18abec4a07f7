# Third-party headers for the wasm build (MEMFIT_WASM). Debian's nlohmann-json and fmt are header
# libraries under /usr/include, but /usr/include as a whole must not reach emcc (glibc's headers
# break the wasm target): a folder in the build tree holds links to those two folders only.
set(MEMFIT_WASM_INCLUDE ${CMAKE_BINARY_DIR}/wasm-include)
file(MAKE_DIRECTORY ${MEMFIT_WASM_INCLUDE})
foreach(dir nlohmann fmt)
  if(NOT EXISTS /usr/include/${dir})
    message(FATAL_ERROR "/usr/include/${dir} not found: run scripts/install-deps.sh")
  endif()
  file(CREATE_LINK /usr/include/${dir} ${MEMFIT_WASM_INCLUDE}/${dir} SYMBOLIC)
endforeach()
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE ${MEMFIT_WASM_INCLUDE})
add_library(fmt::fmt INTERFACE IMPORTED)
target_include_directories(fmt::fmt SYSTEM INTERFACE ${MEMFIT_WASM_INCLUDE})
# fmt header-only: Debian's libfmt.so is a host library.
target_compile_definitions(fmt::fmt INTERFACE FMT_HEADER_ONLY)
# Exceptions: nlohmann's parser and the API's catch-alls rely on them (wasm exception handling).
add_compile_options(-fwasm-exceptions)
add_link_options(-fwasm-exceptions)
