# Most of the time a fresh build spends is in the same Qt, spdlog and standard headers, parsed
# again for every source. With CMCP_PRECOMPILED_HEADERS each of the daemon's Qt libraries
# parses them once (cmake/precompiled/QtCoreAndLogging.h); the first `./bin/cmcp run` on a new
# machine is that much sooner serving. The sanitizer build turns it off, so that a source that
# forgets an include of its own still fails a build the tests run.
#
#   cmcp_precompiled_headers(<target>...)   targets that link cmcp_common (Qt Core and spdlog)
option(CMCP_PRECOMPILED_HEADERS "Precompile the common Qt and spdlog headers of each library" ON)

function(cmcp_precompiled_headers)
    if(NOT CMCP_PRECOMPILED_HEADERS)
        return()
    endif()
    foreach(target IN LISTS ARGN)
        target_precompile_headers(${target} PRIVATE
            "${PROJECT_SOURCE_DIR}/cmake/precompiled/QtCoreAndLogging.h")
    endforeach()
endfunction()
