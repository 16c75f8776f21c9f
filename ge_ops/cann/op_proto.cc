// Registers the REG_OP prototypes generated from tf_ge_custom/op_def.py, which the
// file-based TensorFlow parse (atc --framework=3, aclgrphParseTensorFlow) needs
// (docs/ascend-stack.md, "The offline route"): op_protos.inc includes each op's header.
#include "op_protos.inc"
