# Bad-input tests of `dpointnet simulate` (tests/bad_inputs/bad_inputs.py): each case copies the 450-cell
# BMTK example vendored in tests/data/bmtk, applies one mutation and expects exit code 2, an error naming
# the file and the field, and nothing written to the output directory. valid_runs is the unmutated control.
# Include from tests/CMakeLists.txt: include(${CMAKE_CURRENT_SOURCE_DIR}/bad_inputs/cases.cmake)
# The case list must match `bad_inputs.py --list`. Without that data every case fails, saying so.
get_filename_component(DP_BAD_INPUT_DATA "${CMAKE_CURRENT_LIST_DIR}/../data/bmtk" ABSOLUTE)
foreach(case
    valid_runs missing_nodes_file missing_edges_file missing_node_types_file missing_dataset_node_type_id
    missing_dataset_target_node_id unknown_model_template receptor_port_out_of_range receptor_port_zero_glif
    delay_below_one_step missing_syn_weight non_finite_parameter non_finite_parameter_string
    non_finite_parameter_nan_literal mis_signed_parameter g_zero t_ref_negative tau_syn_negative vth_below_el
    dt_zero dt_negative tstop_not_multiple ids_out_of_range source_ids_out_of_range
    inconsistent_dataset_lengths edges_into_virtual_population mixed_virtual_population spike_time_nonpositive
    spike_file_missing spike_node_not_in_population unknown_input_type input_node_set_unknown
    input_node_set_not_virtual batch_size_zero manifest_cycle missing_network_child_file
    output_exists_without_overwrite glif2_refused iaf_nonzero_I_e unknown_precision
    per_node_dynamics_short
    per_node_dynamics_unknown_key per_node_dynamics_invalid per_node_dynamics_not_numeric double_alpha_amp_slow_length
    double_alpha_amp_slow_negative double_alpha_missing_tau_syn_slow double_alpha_port_beyond_fast
    unknown_dynamics nest_dt_not_whole_microseconds nest_delay_below_resolution discrete_V_min_refused
    discrete_asc_r_refused nest_asc_r_out_of_range lgn_stimulus_missing lgn_stimulus_type_unknown
    lgn_direction_missing lgn_contrast_out_of_range lgn_stimulus_unknown_key lgn_direction_convention_unknown
    lgn_movie_file_missing lgn_pre_post_too_long lgn_rates_sample_out_of_range)
  add_test(NAME bad_input.${case}
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/bad_inputs.py --case ${case}
                   --bin $<TARGET_FILE:dpointnet> --data ${DP_BAD_INPUT_DATA})
  set_tests_properties(bad_input.${case} PROPERTIES
                       ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false" TIMEOUT 60 LABELS bad_input)
endforeach()
