# The compile and link options of the GE library (libtf_ge_custom_ge.so), shared by the
# package's build (../CMakeLists.txt) and GE in the loop (../ge_in_loop/CMakeLists.txt), so the
# harness builds the library exactly as it ships.
#
# -Bsymbolic-functions: the library's calls of functions it defines itself bind to its own
# definitions. It matters for the creator registry it takes from the toolkit's
# custom_op_registry_static archive: libgraph defines the same functions
# (CustomOpCreatorRegister's constructor, RegisterCustomOpLocalCreator), and in a GE process
# libgraph is loaded first, globally. GE's OM loader loads the model's copy of this library
# from memory and takes the creators from that copy's own GetRegisteredCustomOpCreators
# (base/common/helper/custom_op_registry_builder.cc): were the copy's REG_AUTO_MAPPING_OP
# constructors bound to libgraph's, AddCustom would go into libgraph's list and the copy's
# would be empty. GE's CMake compiles the archive with -fvisibility=hidden, which binds them
# locally already; this keeps it so for an archive built without it.
# tests/ge/test_ge_in_loop.py runs the memfd copy with the archive built both ways, and
# without these options, in a process that has libgraph's registry loaded globally.
#
# The copy leaves with its model (docs/ge-library.md): GE closes a model's memfd copy when the
# model unloads, and the next model's copy usually gets the same /proc/self/fd/N name, which
# glibc takes for the library still loaded if the old copy stayed. A copy stays while it holds
# an STB_GNU_UNIQUE symbol (GCC gives that binding to the function-local statics and static
# members of inline functions and templates with default visibility) or a symbol another
# object bound to. Hence:
#   -fvisibility=hidden -fvisibility-inlines-hidden: the adapter's own classes, vtables and
#       typeinfo stay inside (the core is built so already);
#   -fno-gnu-unique (GCC): no STB_GNU_UNIQUE object, whatever a header of GE's defines inline;
#   ge_library.exports: a version script that exports only the three functions GE looks up
#       and makes every other symbol local, also those of the archives linked in.
# tests/ge/test_library_symbols.py reads the built library's dynamic symbol table.
set(TF_GE_CUSTOM_GE_LIBRARY_EXPORTS "${CMAKE_CURRENT_LIST_DIR}/ge_library.exports")
function(tf_ge_custom_ge_library_link target)
  target_compile_options(${target} PRIVATE -fvisibility=hidden -fvisibility-inlines-hidden
                                           $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
  target_link_options(${target} PRIVATE -Wl,-Bsymbolic-functions
                                        "-Wl,--version-script=${TF_GE_CUSTOM_GE_LIBRARY_EXPORTS}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${TF_GE_CUSTOM_GE_LIBRARY_EXPORTS}")
endfunction()
