# The daemon is one library per layer, and each layer sees only itself and the layers it links.
# Every source includes "<folder>/<Header>.h" (the folder as under server/, or as under the
# top of the tree: common/, console/, jail/, workers/browser/), and each library puts on its include path one directory of its own, made here,
# holding a link to each of its folders and nothing else. A library reaches another's headers
# only by linking it, which CMake allows only downwards (a cycle fails the link), so an include
# that runs upwards is not found and the build fails. docs/architecture.md says which layer is where.
#
#   cmcp_layer(<target> <folder>...)   e.g. cmcp_layer(cmcp_mcp server/mcp)
function(cmcp_layer target)
    set(root "${CMAKE_BINARY_DIR}/layers/${target}")
    foreach(folder IN LISTS ARGN)
        # Named as under server/ or tests/: server/mcp is "mcp", tests/conformance/fixtures
        # "conformance/fixtures".
        string(REGEX REPLACE "^(server|tests)/" "" name "${folder}")
        get_filename_component(parent "${root}/${name}" DIRECTORY)
        file(MAKE_DIRECTORY "${parent}")
        # A link left by a build of the tree before a folder moved points at the old place.
        set(target_folder "${PROJECT_SOURCE_DIR}/${folder}")
        if(IS_SYMLINK "${root}/${name}")
            file(READ_SYMLINK "${root}/${name}" linked)
            if(NOT linked STREQUAL target_folder)
                file(REMOVE "${root}/${name}")
            endif()
        endif()
        if(NOT IS_SYMLINK "${root}/${name}")
            file(CREATE_LINK "${target_folder}" "${root}/${name}" SYMBOLIC)
        endif()
    endforeach()
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
        target_include_directories(${target} PRIVATE "${root}")
    elseif(type STREQUAL "INTERFACE_LIBRARY")
        target_include_directories(${target} INTERFACE "${root}")
    else()
        target_include_directories(${target} PUBLIC "${root}")
    endif()
endfunction()
