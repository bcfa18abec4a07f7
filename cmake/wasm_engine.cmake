# The WebAssembly engine (MEMFIT_WASM): memfit_engine.mjs (an ES module factory) and
# memfit_engine.wasm, wrapped by site/engine.mjs. Linked from the library's modules up to
# request and the API (src/api/); scripts/build-site.sh builds it and writes the site.
add_executable(memfit_engine ${CMAKE_SOURCE_DIR}/src/wasm/engine_main.cc)
target_include_directories(memfit_engine PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(memfit_engine PRIVATE memfit_api)
set_target_properties(memfit_engine PROPERTIES SUFFIX ".mjs")
# The heap grows on demand up to MEMFIT_WASM_MAX_MEMORY (the tab's hard limit: an allocation past
# it fails as bad_alloc, caught by the API, instead of taking the tab down).
set(MEMFIT_WASM_MAX_MEMORY "1024MB" CACHE STRING "The wasm engine's heap limit")
target_link_options(memfit_engine PRIVATE
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createMemfitModule
  -sENVIRONMENT=web,worker,node
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=33554432 -sMAXIMUM_MEMORY=${MEMFIT_WASM_MAX_MEMORY}
  -sTOTAL_STACK=1048576
  -sEXPORTED_FUNCTIONS=_memfit_run,_memfit_last_status,_memfit_last_error_kind,_memfit_set_env,_malloc,_free
  -sEXPORTED_RUNTIME_METHODS=ccall,cwrap,FS,UTF8ToString
  -sFILESYSTEM=1 -lidbfs.js -lworkerfs.js -lnodefs.js
  -sINCOMING_MODULE_JS_API=[locateFile,wasmBinary,print,printErr,preRun,noInitialRun,instantiateWasm]
  -sABORTING_MALLOC=0)
