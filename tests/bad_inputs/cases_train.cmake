# Bad-input tests of `dpointnet train` (tests/bad_inputs/bad_train.py): each case generates a 60-neuron network
# (`dpointnet generate --neurons 60 --seed 2`) and a training config (T = 20 ms, batch 2, 2 steps), applies one
# mutation and expects exit code 2, an error naming the file (the config, or the checkpoint for the --resume
# cases) and the offending key, and nothing written to the output directory. valid_train is the control.
# Include from tests/CMakeLists.txt: include(${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs/cases_train.cmake)
# The case list must match `bad_train.py --list`. No BMTK example data is needed.
foreach(case
    valid_train unknown_loss negative_cost missing_cost batch_size_zero does_not_fit_memory nonexistent_surface
    trainable_not_bool
    unknown_optimizer negative_lr beta1_ge_1 loss_scale_without_float16 loss_scale_not_power_of_two
    loss_scale_growth_zero loss_scale_unknown_key unknown_surrogate unknown_train_key steps_zero
    checkpoint_interval_zero accumulate_zero accumulate_not_integer
    warmup_not_whole_steps warmup_negative carry_state_not_bool conditions_empty conditions_unknown_input conditions_node_set_changed
    unknown_approach condition_object_unknown_key condition_names_repeat condition_name_slash
    condition_losses_unknown_type
    target_blocks_zero target_blocks_word target_blocks_too_many
    rate_distribution_missing_file rate_distribution_missing_type
    rate_distribution_missing_column rate_distribution_negative_rate rate_distribution_unknown_penalty
    rate_distribution_group_by_unknown_column rate_distribution_group_by_missing_value
    rate_distribution_cell_type_not_v1_name rate_distribution_rate_column_missing
    rate_distribution_annulus_without_core rate_distribution_empty_core loss_window_leaves_no_step
    loss_window_not_whole_steps emd_recurrent_frozen sync_targets_without_table sync_pool_too_small
    initial_state_with_carry_state initial_state_unknown_type
    missing_losses checkpoint_from_other_network checkpoint_from_other_config
    resume_missing_file)
  add_test(NAME bad_train.${case}
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/bad_train.py --case ${case}
                   --bin $<TARGET_FILE:dpointnet>)
  set_tests_properties(bad_train.${case} PROPERTIES
                       ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false" TIMEOUT 120 LABELS bad_input)
endforeach()
