"""Oracles read off TF Adapter's public source (hicann/tensorflow, 2026-11), not off our code.

TF1_KEYS: every key TF1's adapter reads from the NpuOptimizer parameter_map, with the
AttrValue field it reads (tf_adapter/util/npu_attrs.cc: ``params.at("key").b()/.i()/.s()``
in ``NpuAttrs::SetNpuOptimizerAttr``, plus ``const_input`` in ``GetPassOptions``).

TF2_FIELDS: every option field of ``npu_device.global_options()``
(tf_adapter_2.x/python/npu_device/configs/npu_config.py and the configs it nests).
"""

TF1_KEYS = {
    "ac_parallel_enable": "s",
    "aicore_num": "s",
    "all_tensor_not_empty": "b",
    "aoe_config_file": "s",
    "aoe_mode": "s",
    "atomic_clean_policy": "i",
    "auto_multistream_parallel_mode": "s",
    "auto_tune_mode": "s",
    "buffer_optimize": "s",
    "compile_dynamic_mode": "b",
    "compile_hybrid_mode": "i",
    "compress_weight_conf": "s",
    "const_input": "s",
    "customize_dtypes": "s",
    "debug_dir": "s",
    "deterministic": "i",
    "device_type": "s",
    "distribute_config": "s",
    "dump_data": "s",
    "dump_debug_mode": "s",
    "dump_layer": "s",
    "dump_mode": "s",
    "dump_path": "s",
    "dump_step": "s",
    "dynamic_dims": "s",
    "dynamic_graph_execute_mode": "s",
    "dynamic_input": "b",
    "dynamic_inputs_shape_range": "s",
    "dynamic_node_type": "i",
    "enable_compress_weight": "b",
    "enable_data_pre_proc": "b",
    "enable_dump": "b",
    "enable_dump_debug": "b",
    "enable_exception_dump": "i",
    "enable_graph_parallel": "b",
    "enable_scope_fusion_passes": "s",
    "enable_small_channel": "i",
    "event_sync_timeout": "i",
    "experimental_accelerate_train_mode": "s",
    "experimental_logical_device_cluster_deploy_mode": "s",
    "experimental_logical_device_id": "s",
    "experimental_model_deploy_devicelist": "s",
    "experimental_model_deploy_mode": "s",
    "export_compile_stat": "i",
    "external_weight": "b",
    "frozen_variable": "b",
    "fusion_switch_file": "s",
    "graph_compiler_cache_dir": "s",
    "graph_exec_timeout": "i",
    "graph_max_parallel_model_num": "i",
    "graph_memory_max_size": "s",
    "graph_parallel_option_path": "s",
    "graph_run_mode": "i",
    "graph_slice": "s",
    "HCCL_algorithm": "s",
    "hccl_timeout": "i",
    "hcom_multi_mode": "b",
    "hcom_parallel": "b",
    "in_out_pair": "s",
    "in_out_pair_flag": "b",
    "input_batch_cpy": "b",
    "input_fusion_size": "i",
    "input_shape": "s",
    "insert_op_file": "s",
    "is_tailing_optimization": "b",
    "iterations_per_loop": "i",
    "jit_compile": "s",
    "job": "s",
    "local_device_list": "s",
    "local_rank_id": "i",
    "lower_functional_ops": "b",
    "memory_optimization_policy": "s",
    "mix_compile_mode": "b",
    "modify_mixlist": "s",
    "oo_constant_folding": "b",
    "oo_level": "s",
    "op_compiler_cache_dir": "s",
    "op_compiler_cache_mode": "s",
    "op_debug_config": "s",
    "op_debug_level": "i",
    "op_execute_timeout": "i",
    "op_precision_mode": "s",
    "op_select_implmode": "s",
    "op_wait_timeout": "i",
    "optimization_switch": "s",
    "optypelist_for_implmode": "s",
    "precision_mode": "s",
    "precision_mode_v2": "s",
    "profiling_mode": "b",
    "profiling_options": "s",
    "quant_dumpable": "s",
    "resource_config_path": "s",
    "session_device_id": "i",
    "shape_generalization_mode": "s",
    "soc_config": "s",
    "static_memory_policy": "i",
    "stream_max_parallel_num": "s",
    "stream_sync_timeout": "i",
    "task_index": "i",
    "topo_sorting_mode": "i",
    "use_off_line": "b",
    "variable_format_optimize": "b",
    "variable_memory_max_size": "s",
    "variable_placement": "s",
    "variable_use_1g_huge_page": "i",
    "work_path": "s",
}

TF2_FIELDS = frozenset("""
graph_run_mode graph_memory_max_size variable_memory_max_size variable_format_optimize
enable_scope_fusion_passes fusion_switch_file precision_mode op_select_implmode
optypelist_for_implmode op_compiler_cache_mode op_compiler_cache_dir stream_max_parallel_num
ac_parallel_enable quant_dumpable hcom_parallel hcom_multi_mode is_tailing_optimization
op_debug_level op_debug_config debug_dir modify_mixlist enable_exception_dump
enable_small_channel deterministic op_precision_mode graph_exec_timeout topo_sorting_mode
customize_dtypes overflow_flag stream_sync_timeout event_sync_timeout execute_times
external_weight jit_compile graph_compiler_cache_dir input_fusion_size compile_dynamic_mode
precision_mode_v2 export_compile_stat aicore_num oo_constant_folding input_batch_cpy
shape_generalization_mode all_tensor_not_empty auto_multistream_parallel_mode oo_level
optimization_switch
dump_config.enable_dump dump_config.dump_path dump_config.dump_step dump_config.dump_mode
dump_config.enable_dump_debug dump_config.dump_debug_mode dump_config.dump_data
dump_config.dump_layer
aoe_config.aoe_mode aoe_config.work_path aoe_config.aoe_config_file
profiling_config.enable_profiling profiling_config.profiling_options
memory_config.atomic_clean_policy memory_config.static_memory_policy
memory_config.variable_use_1g_huge_page
experimental.resource_config_path experimental.graph_parallel_option_path
experimental.enable_graph_parallel
experimental.multi_branches_config.input_shape
experimental.multi_branches_config.dynamic_node_type
experimental.multi_branches_config.dynamic_dims
experimental.logical_device_deploy_config.logical_device_cluster_deploy_mode
experimental.logical_device_deploy_config.logical_device_id
experimental.model_deploy_config.model_deploy_mode
experimental.model_deploy_config.model_deploy_devicelist
experimental.graph_memory_optimize_config.recompute
experimental.graph_memory_optimize_config.graph_slice
""".split())
