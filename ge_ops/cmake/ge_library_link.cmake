# The link options of the GE library (libtf_ge_custom_ge.so), shared by the package's build
# (../CMakeLists.txt) and GE in the loop (../ge_in_loop/CMakeLists.txt), so the harness links
# the library exactly as it ships.
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
# locally already; this keeps it so for an archive built without it. Data (function-local
# statics, typeinfo) is not affected and stays shared with GE's.
# tests/ge/test_ge_in_loop.py runs the memfd copy with the archive built both ways, and
# without this option, in a process that has libgraph's registry loaded globally.
function(tf_ge_custom_ge_library_link target)
  target_link_options(${target} PRIVATE -Wl,-Bsymbolic-functions)
endfunction()
